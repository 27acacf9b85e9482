// `ferry verify` (docs/cli.md, "verify"; docs/api.md, "Verify"): compare two prefixes, run by the server
// as a job that changes nothing, followed to its end with progress; then what it found, the first objects
// that are not equal, and an exit code that says whether the two prefixes hold the same objects.
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Job } from '../../api/routes.js';
import { VERIFY_MODES } from '../../states.js';
import { type Cli, type Context, contextFor } from '../context.js';
import { CliError, EXIT } from '../exit.js';
import { follow } from '../follow.js';
import { count, table } from '../format.js';
import { colonForm } from '../targets.js';
import { jobProgress, watch } from '../watch.js';
import { jobHint, showJob } from './jobs.js';
import { filterOf, filterOptions } from './sync.js';

/** The objects a verify found not equal that are printed after it; the report has every one. */
const SHOWN = 20;

interface Found {
  key: string;
  outcome: string;
  reason?: string;
}

/** How many of a verify's objects are not equal on both sides. */
export function differences(j: Pick<Job, 'counts'>): number {
  const c = j.counts;
  return (c.differ ?? 0) + (c.missing_in_destination ?? 0) + (c.missing_in_source ?? 0);
}

/** The first `limit` objects of a job's report that are not equal (and not failed), reading no further. */
async function firstDifferences(ctx: Context, jobId: string, limit: number): Promise<Found[]> {
  const res = await ctx.api().raw('GET', `/v1/jobs/${encodeURIComponent(jobId)}/report`, {
    headers: { accept: 'application/x-ndjson' },
  });
  if (!res.body) return [];
  const body = Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>);
  const found: Found[] = [];
  try {
    for await (const line of createInterface({ input: body, crlfDelay: Number.POSITIVE_INFINITY })) {
      if (line === '') continue;
      const object = JSON.parse(line) as Found;
      if (['differ', 'missing_in_destination', 'missing_in_source'].includes(object.outcome))
        found.push(object);
      if (found.length >= limit) break;
    }
  } finally {
    body.destroy();
  }
  return found;
}

export function verifyCommand(cli: Cli): Cli {
  return cli.command(
    'verify <src> <dst>',
    'compare two prefixes object by object (equal, differ, missing on either side); changes nothing',
    (y) =>
      y
        .positional('src', { type: 'string', demandOption: true, describe: 'location:bucket/prefix/' })
        .positional('dst', { type: 'string', demandOption: true, describe: 'location:bucket/prefix/' })
        .option('mode', {
          choices: VERIFY_MODES,
          describe:
            'checksum (default): by a hash both sides report, reading the bytes where none is common; download: read and hash both sides; size: sizes only',
        })
        .options(filterOptions)
        .option('watch', {
          alias: 'w',
          type: 'boolean',
          default: true,
          describe:
            'follow the job to its end and print what it found (exit 0 all equal, 7 differences, 6 not complete); --no-watch prints the job id',
        })
        .example('$0 verify photos:my-bucket/2026/ archive:backup/2026/', '')
        .example(
          '$0 verify photos:my-bucket/ archive:all/ --mode download --include "*.jpg"',
          'read every byte',
        ),
    async (argv) => {
      const ctx = contextFor(argv);
      const filter = filterOf(argv);
      const body = {
        from: colonForm(argv.src),
        to: colonForm(argv.dst),
        ...(argv.mode === undefined ? {} : { mode: argv.mode }),
        ...(filter === undefined ? {} : { filter }),
      };
      const accepted = await ctx.api().send('POST', '/v1/verify', { body });
      const id = accepted.job_id;
      if (argv.watch === false) {
        return ctx.print(
          accepted,
          () => `verify job ${id} ${accepted.status}\nferry jobs watch ${id} follows it`,
        );
      }
      const states = follow(ctx.api(), 'job', id, 1000);
      const last = await watch(ctx, states, jobProgress, (j) => showJob(j), {
        tty: process.stderr.isTTY === true,
        hint: jobHint(id),
      });
      const n = differences(last);
      if (n === 0) return;
      if (!ctx.json) {
        const found = await firstDifferences(ctx, id, SHOWN);
        const listing = table(found, [
          { header: 'FOUND', value: (f) => f.outcome.replaceAll('_', ' ') },
          { header: 'OBJECT', value: (f) => f.key },
          { header: 'WHY', value: (f) => f.reason ?? '' },
        ]);
        process.stdout.write(`\n${listing}\n`);
        if (n > found.length) ctx.note(`(first ${found.length}; ferry jobs report ${id} lists every object)`);
      }
      throw new CliError(`${count(n, 'object')} not the same on both sides`, EXIT.differences);
    },
  );
}
