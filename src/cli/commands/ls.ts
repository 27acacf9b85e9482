// `ferry ls`: the locations when given nothing, a listing of a location's path otherwise
// (POST /v1/list, docs/api.md "Listing objects").
import { type Cli, type Context, contextFor } from '../context.js';
import { count, size, table, time } from '../format.js';
import { locationRef, parsePlace } from '../targets.js';
import { printLocations } from './locations.js';

/**
 * The API's hint at a bucket store's root ('the entries are buckets; send path "<bucket>" …', for callers
 * of POST /v1/list) said as the command to type: "these are buckets: ferry ls photos:<bucket>/ lists one".
 */
function rootHint(hint: string, location: string): string {
  const word = /^the entries are (\w+?)s;/.exec(hint)?.[1];
  return word === undefined
    ? hint
    : `these are ${word}s: ferry ls ${location}:<${word}>/ lists what one holds`;
}

async function list(ctx: Context, place: string, recurse: boolean): Promise<void> {
  const { location, path } = parsePlace(place);
  const body = { ...locationRef(location), path, ...(recurse ? { recurse: true } : {}) };
  const answer = await ctx.api().send('POST', '/v1/list', { body });
  if (!ctx.json && answer.hint) ctx.note(rootHint(answer.hint, location));
  ctx.print(answer, () => {
    if (answer.entries.length === 0) return 'nothing here';
    const rows = table(answer.entries, [
      { header: 'SIZE', value: (e) => (e.isDir ? '-' : size(e.size)), right: true },
      { header: 'MODIFIED', value: (e) => time(e.modTime) },
      { header: 'NAME', value: (e) => `${recurse ? e.path : e.name}${e.isDir ? '/' : ''}` },
    ]);
    const files = answer.entries.filter((e) => !e.isDir);
    const bytes = files.reduce((sum, e) => sum + Math.max(0, e.size), 0);
    return `${rows}\n${count(answer.entries.length - files.length, 'folder')}, ${count(files.length, 'file')}, ${size(bytes)}`;
  });
}

export function lsCommand(cli: Cli): Cli {
  return cli.command(
    'ls [place]',
    'list the locations, or the buckets, folders and files at location[:path]',
    (y) =>
      y
        .positional('place', { type: 'string', describe: 'location or location:path (bucket/folder)' })
        .option('recurse', { alias: 'R', type: 'boolean', describe: 'descend into sub-folders' })
        .example('$0 ls', 'the locations')
        .example('$0 ls photos:my-bucket/2026 -R', 'everything under 2026/'),
    async (argv) => {
      const ctx = contextFor(argv);
      if (argv.place === undefined) return printLocations(ctx);
      return list(ctx, argv.place, argv.recurse === true);
    },
  );
}
