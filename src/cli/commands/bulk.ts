// `ferry cp`, `mv`, `rm` and `pull`: the work that runs in the background on the server
// (docs/api.md, "Transfers"). Each prints what was accepted and how to follow it, or follows it itself
// with --watch. `rm` shows what it would remove and asks first (docs/cli.md, "rm").
import { existsSync, readFileSync } from 'node:fs';
import type { Pulled, Queued } from '../../api/routes.js';
import { type Cli, type Context, contextFor } from '../context.js';
import { CliError, EXIT, usageError } from '../exit.js';
import { count, size, table, time } from '../format.js';
import { confirm, interactive } from '../prompt.js';
import { colonForm, isLocalPath, literalFor, literalOption, slashForm } from '../targets.js';
import { copyLocal, hasLocalSide, type LocalOptions } from '../transfer/run.js';
import { watchJob, watchTransfer } from './jobs.js';
import { backupOf, backupOption, filterOf, filterOptions, showPlan } from './sync.js';

const watchOption = {
  watch: {
    alias: 'w',
    type: 'boolean',
    describe: 'follow the work to its end (exit 0 complete, 6 otherwise)',
  },
} as const;

/** Reads a manifest: one key per line (relative to the source prefix), blank lines ignored; - is stdin. */
export function readManifest(file: string): string[] {
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  return text.split(/\r?\n/).filter((line) => line.trim() !== '');
}

/** A move's, a remove's or a pull's answer: the one transfer it queued (or a pull already ran). */
async function accepted(ctx: Context, what: string, r: Queued | Pulled, follow: boolean): Promise<void> {
  if (follow) return watchTransfer(ctx, r.id, 1);
  ctx.print(r, () => `${what} ${r.status}: transfer ${r.id}\nferry transfers watch ${r.id} follows it`);
}

const localOptions = {
  transfers: {
    type: 'number',
    describe: 'with a path on this computer: how many files move at once (1 to 64; default 4)',
  },
  quiet: {
    alias: 'q',
    type: 'boolean',
    describe: 'with a path on this computer: no progress line and no summary (errors still print)',
  },
} as const;

interface LocalArgv {
  transfers?: number | undefined;
  quiet?: boolean | undefined;
  dryRun?: boolean | undefined;
}

function localOptionsOf(argv: LocalArgv, move: boolean): LocalOptions {
  return {
    transfers: argv.transfers ?? 4,
    quiet: argv.quiet === true,
    dryRun: argv.dryRun === true,
    move,
  };
}

/** Options that mean something only with a path on this computer, refused between two locations. */
function refuseLocalOnly(argv: LocalArgv & { dryRun?: boolean | undefined }, dryRunToo: boolean): void {
  const given = [
    argv.transfers !== undefined ? '--transfers' : undefined,
    argv.quiet !== undefined ? '--quiet' : undefined,
    dryRunToo && argv.dryRun !== undefined ? '--dry-run' : undefined,
  ].filter((o) => o !== undefined);
  if (given.length > 0)
    throw usageError(
      `${given.join(' and ')} ${given.length === 1 ? 'works' : 'work'} only when one side is a path on this computer (./file, /folder, ~/…); between two locations the server does the work`,
    );
}

/**
 * A bare name with no `:` is a location (docs/cli.md, "Places"); when the server refuses the copy (no
 * such location, or a place that cannot be copied as written) and a file here has that name, the error
 * says how to write the file.
 */
async function hintLocal<T>(paths: string[], work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof CliError) || (err.exitCode !== EXIT.notFound && err.exitCode !== EXIT.usage))
      throw err;
    const here = paths.find((p) => !p.includes(':') && existsSync(p));
    if (here === undefined) throw err;
    throw new CliError(
      `${err.message}; "${here}" is read as a location; for the file or folder on this computer write ./${here}`,
      err.exitCode,
    );
  }
}

/** The last of several paths is the destination. */
function split(paths: string[]): { from: string | string[]; to: string } {
  const to = paths.at(-1) as string;
  const from = paths.slice(0, -1);
  return { from: from.length === 1 ? (from[0] as string) : from, to };
}

export function bulkCommands(cli: Cli): Cli {
  return cli
    .command(
      'cp <src> <dst>',
      'copy one object, or every object under a prefix (a path ending in /); either side may be a file or folder on this computer',
      (y) =>
        y
          .positional('src', {
            type: 'string',
            demandOption: true,
            describe: 'location:bucket/key, location:bucket/prefix/, or ./file or ./folder on this computer',
          })
          .positional('dst', {
            type: 'string',
            demandOption: true,
            describe: 'location:bucket/key, a prefix ending in /, or a path on this computer',
          })
          .option('manifest', {
            type: 'string',
            describe: 'a file of keys (one a line, relative to the prefix) to copy; - reads stdin',
          })
          .option('overwrite', {
            choices: ['always', 'if-missing'] as const,
            describe: 'prefix copies: replace objects at the destination (always, the default) or skip them',
          })
          .options(filterOptions)
          .options(backupOption)
          .options(watchOption)
          .options(localOptions)
          .option('dry-run', {
            alias: 'n',
            type: 'boolean',
            describe:
              'only show what would be copied (between locations: the plan, which ferry plans run runs)',
          })
          .example('$0 cp photos:my-bucket/2026/ archive:backup/2026/ --overwrite if-missing -w', '')
          .example('$0 cp ./report.pdf photos:my-bucket/reports/', 'upload one file')
          .example('$0 cp ./site photos:my-bucket/site/ --transfers 8', 'upload a folder')
          .example('$0 cp photos:my-bucket/2026/ ./2026', 'download everything under a prefix'),
      async (argv) => {
        const ctx = contextFor(argv);
        const filter = filterOf(argv);
        if (hasLocalSide(argv.src, argv.dst)) {
          if (
            argv.manifest !== undefined ||
            argv.overwrite !== undefined ||
            argv.watch !== undefined ||
            argv.backupTo !== undefined ||
            filter !== undefined
          )
            throw usageError(
              '--manifest, --overwrite, --watch, --backup-to and the filters are for copies between locations; with a path on this computer the copy runs here, with its progress shown',
            );
          return copyLocal(ctx, argv.src, argv.dst, localOptionsOf(argv, false));
        }
        refuseLocalOnly(argv, false);
        const body = {
          from: colonForm(argv.src),
          to: colonForm(argv.dst),
          ...(argv.manifest === undefined ? {} : { manifest: readManifest(argv.manifest) }),
          ...(argv.overwrite === undefined ? {} : { overwrite: argv.overwrite }),
          ...(filter === undefined ? {} : { filter }),
          ...backupOf(argv),
        };
        if (argv.dryRun) {
          if (argv.backupTo !== undefined) throw usageError('--backup-to is not taken with --dry-run');
          if (!argv.src.endsWith('/'))
            throw usageError('--dry-run between locations works for a prefix copy (paths ending in /)');
          const plan = await ctx.api().send('POST', '/v1/copy', { body: { ...body, dry_run: true } });
          return ctx.print(plan, () => showPlan(plan));
        }
        const r = await hintLocal([argv.src, argv.dst], () => ctx.api().send('POST', '/v1/copy', { body }));
        if ('job_id' in r) {
          if (argv.watch) return watchJob(ctx, r.job_id, 1);
          return ctx.print(
            r,
            () => `copy job ${r.job_id} ${r.status}\nferry jobs watch ${r.job_id} follows it`,
          );
        }
        return accepted(ctx, 'copy', r, argv.watch === true);
      },
    )
    .command(
      'mv <paths..>',
      'move files (or a pattern) to a destination; several sources or a pattern need a folder ending in /; one side may be a file or folder on this computer',
      (y) =>
        y
          .positional('paths', { type: 'string', array: true, demandOption: true, describe: 'SRC... DST' })
          .options(literalOption)
          .option('yes', { alias: 'y', type: 'boolean', describe: 'do not ask' })
          .option('dry-run', { alias: 'n', type: 'boolean', describe: 'only show what would be moved' })
          .options(backupOption)
          .options(watchOption)
          .options(localOptions)
          .example('$0 mv "photos:my-bucket/inbox/*.jpg" archive:backup/inbox/', '')
          .example(
            '$0 mv ./outbox photos:my-bucket/inbox/',
            'upload a folder, removing each file once stored',
          ),
      async (argv) => {
        if (argv.paths.length < 2) throw usageError('mv needs a source and a destination');
        const ctx = contextFor(argv);
        if (argv.paths.some(isLocalPath)) {
          if (argv.paths.length > 2)
            throw usageError('with a path on this computer, mv takes one source and one destination');
          const [src, dst] = argv.paths as [string, string];
          if (hasLocalSide(src, dst)) {
            if (argv.watch !== undefined || argv.literal !== undefined || argv.backupTo !== undefined)
              throw usageError('--watch, --literal and --backup-to are for moves between locations');
            return copyLocal(ctx, src, dst, localOptionsOf(argv, true));
          }
        }
        refuseLocalOnly(argv, false);
        const { from, to } = split(argv.paths.map(slashForm));
        const literal = literalFor(argv.paths.slice(0, -1), argv.literal);
        const body = { from, to, ...(literal ? { literal: true } : {}) };
        // What would move and where (POST /move/preview): shown and asked about at a terminal, as rm does.
        if (argv.dryRun || (!argv.yes && interactive())) {
          const preview = await ctx.api().send('POST', '/move/preview', { body });
          const listing = table(preview.entries, [
            { header: 'FROM', value: (e) => e.from },
            { header: 'TO', value: (e) => e.to },
          ]);
          const summary = count(preview.entries.length, 'file');
          if (argv.dryRun) return ctx.print(preview, () => `${listing}\nwould move ${summary}`);
          process.stderr.write(`${listing}\n`);
          if (!(await confirm(`move ${summary}?`))) {
            ctx.note('nothing moved');
            return;
          }
        }
        const r = await hintLocal(argv.paths, () =>
          ctx.api().send('POST', '/move', { body: { ...body, ...backupOf(argv) } }),
        );
        return accepted(ctx, 'move', r, argv.watch === true);
      },
    )
    .command(
      'rm <paths..>',
      'remove files (or patterns): shows what would go and asks first',
      (y) =>
        y
          .positional('paths', {
            type: 'string',
            array: true,
            demandOption: true,
            describe: 'location:path or a pattern',
          })
          .options(literalOption)
          .option('yes', { alias: 'y', type: 'boolean', describe: 'do not ask (for scripts)' })
          .option('dry-run', { alias: 'n', type: 'boolean', describe: 'only show what would be removed' })
          .options(backupOption)
          .options(watchOption)
          .example('$0 rm "photos:my-bucket/tmp/**"', '')
          .example(
            '$0 rm "photos:my-bucket/tmp/**" --backup-to archive:backup/removed/',
            'keep each file first; ferry jobs undo ID puts them back',
          ),
      async (argv) => {
        const ctx = contextFor(argv);
        const paths = argv.paths.map(slashForm);
        const path = paths.length === 1 ? (paths[0] as string) : paths;
        const literal = literalFor(argv.paths, argv.literal);
        const body = { path, ...(literal ? { literal: true } : {}) };
        const preview = await ctx.api().send('POST', '/remove/preview', { body });
        const files = preview.entries.filter((e) => !e.isDir);
        const bytes = files.reduce((sum, e) => sum + Math.max(0, e.size), 0);
        const summary = `${count(files.length, 'file')}, ${size(bytes)}`;
        const listing = table(preview.entries, [
          { header: 'SIZE', value: (e) => (e.isDir ? '-' : size(e.size)), right: true },
          { header: 'MODIFIED', value: (e) => time(e.modTime) },
          { header: 'PATH', value: (e) => e.path + (e.isDir ? '/' : '') },
        ]);
        if (argv.dryRun) return ctx.print(preview, () => `${listing}\nwould remove ${summary}`);
        if (preview.entries.length === 0)
          return ctx.print({ entries: [] }, () => 'nothing matches; nothing removed');
        if (!argv.yes) {
          if (!interactive())
            throw new CliError(
              `refusing to remove ${summary} without confirmation: stdin is not a terminal. Pass --yes to remove without asking, or --dry-run to see the list`,
              EXIT.usage,
            );
          process.stderr.write(`${listing}\n`);
          const question =
            argv.backupTo === undefined
              ? `remove ${summary}? This cannot be undone.`
              : `remove ${summary}? Each is kept under ${argv.backupTo} first.`;
          if (!(await confirm(question))) {
            ctx.note('nothing removed');
            return;
          }
        }
        const r = await ctx.api().send('POST', '/remove', { body: { ...body, ...backupOf(argv) } });
        return accepted(ctx, `removal of ${summary}`, r, argv.watch === true);
      },
    )
    .command(
      'pull <args..>',
      'fetch http(s) URLs into a location: URL... DST (several URLs need a folder ending in /)',
      (y) =>
        y
          .positional('args', { type: 'string', array: true, demandOption: true, describe: 'URL... DST' })
          .options(watchOption)
          .example('$0 pull https://example.com/report.pdf photos:my-bucket/reports/report.pdf', ''),
      async (argv) => {
        if (argv.args.length < 2) throw usageError('pull needs a URL and a destination');
        const ctx = contextFor(argv);
        const urls = argv.args.slice(0, -1);
        const to = slashForm(argv.args.at(-1) as string);
        const from = urls.length === 1 && urls[0] !== undefined ? urls[0] : urls;
        const r = await ctx.api().send('POST', '/pull', { body: { from, to } });
        return accepted(ctx, 'pull', r, argv.watch === true);
      },
    );
}
