// `ferry jobs …` and `ferry transfers …`: list (newest first, one page), show, watch; retry and cancel
// for jobs (docs/api.md, "Polling"); a job's report (docs/api.md, "Reports").
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Counts, Failures, Job, Transfer } from '../../api/routes.js';
import { givenFromTo, givenText } from '../../display.js';
import { type Cli, type Context, contextFor } from '../context.js';
import { follow } from '../follow.js';
import { fields, size, table, time } from '../format.js';
import { doneOf, jobProgress, transferProgress, watch } from '../watch.js';

type Failure = Failures['failures'][number];

/** Location labels by id, to show `from → to` with names rather than UUIDs (one request). */
async function labelsOf(ctx: Context): Promise<Map<string, string>> {
  const list = await ctx.api().get('/v1/locations');
  return new Map(list.map((l) => [l.id, l.label]));
}

function fromTo(t: Transfer): string {
  return givenFromTo(t.from, t.to);
}

function jobFromTo(j: Job, labels: Map<string, string>): string {
  const side = (s: { id: string; path: string }) => `${labels.get(s.id) ?? s.id}:${s.path}`;
  return `${side(j.from)} → ${side(j.to)}`;
}

function transferBytes(t: Transfer): string {
  return `${size(t.bytes_done)}${t.bytes_total === undefined ? '' : ` of ${size(t.bytes_total)}`}`;
}

function failuresTable(failures: Failure[]): string {
  return failures.length === 0
    ? ''
    : `\n\nfailures:\n${table(failures, [
        { header: 'KEY', value: (f) => f.key },
        { header: 'ATTEMPTS', value: (f) => String(f.attempts), right: true },
        { header: 'ERROR', value: (f) => f.error },
      ])}`;
}

/** The first failures of a job or transfer that has some (one request), for show. */
async function firstFailures(
  ctx: Context,
  kind: 'jobs' | 'transfers',
  id: string,
  failed: number,
): Promise<Failure[]> {
  if (failed <= 0) return [];
  const request = { id, query: { limit: '20' } };
  const page =
    kind === 'jobs'
      ? await ctx.api().get('/v1/jobs/{id}/failures', request)
      : await ctx.api().get('/v1/transfers/{id}/failures', request);
  return page.failures;
}

/**
 * Writes a job's or transfer's report (NDJSON, or CSV) to `file`, or to stdout without one, as it
 * streams: a file appears whole or not at all (written beside it, then renamed).
 */
async function saveReport(ctx: Context, path: string, csv: boolean, file: string | undefined): Promise<void> {
  const res = await ctx.api().raw('GET', `${path}/report`, {
    headers: { accept: csv ? 'text/csv' : 'application/x-ndjson' },
  });
  const body = res.body
    ? Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>)
    : Readable.from([]);
  if (file === undefined) {
    await pipeline(body, process.stdout as Writable, { end: false });
    return;
  }
  const part = `${file}.part`;
  try {
    await pipeline(body, createWriteStream(part));
    await rename(part, file);
  } catch (err) {
    await rm(part, { force: true });
    throw err;
  }
  ctx.note(`report written to ${file}`);
}

const reportOptions = {
  csv: {
    type: 'boolean',
    default: false,
    describe: 'CSV with a header row instead of one JSON object a line',
  },
  output: { alias: 'o', type: 'string', describe: 'write the report to this file instead of stdout' },
} as const;

const pageOptions = {
  limit: { type: 'number', default: 20, describe: 'how many (1 to 1000)' },
  cursor: { type: 'string', describe: 'the next page: the cursor the previous page printed' },
} as const;

const watchOptions = {
  interval: {
    type: 'number',
    default: 1,
    describe: 'seconds between polls when the server has no event stream free',
  },
} as const;

function query(argv: { limit: number; cursor?: string | undefined }) {
  return { limit: String(argv.limit), cursor: argv.cursor || undefined };
}

function nextPage(ctx: Context, command: string, cursor: string | undefined): void {
  if (cursor && !ctx.json) ctx.note(`more: ferry ${command} --cursor ${cursor}`);
}

/**
 * Objects done of the total: copied, skipped, deleted (a sync's, docs/api.md "Sync") and failed. A
 * server whose `total` leaves deletions out still shows a finished job whole, never `247/250`.
 */
export function counts(j: Pick<Job, 'counts'>): string {
  const c = j.counts;
  const done = doneOf(c);
  return `${done}/${Math.max(c.total, done)}${c.failed ? ` (${c.failed} failed)` : ''}`;
}

/**
 * What each count means, in words, for a job's or transfer's `objects:` line. Deletions are said when
 * there were some, or when the job was asked to delete (a sync with delete: true): a copy's "0 deleted"
 * says nothing.
 */
function objectsLine(c: Counts, succeeded: string, deletes = false): string {
  const deleted = c.deleted ?? 0;
  return [
    `${Math.max(c.total, doneOf(c))} total`,
    `${c.succeeded} ${succeeded}`,
    `${c.skipped} skipped`,
    ...(deleted > 0 || deletes ? [`${deleted} deleted`] : []),
    `${c.failed} failed`,
    `${c.pending} pending`,
  ].join(', ');
}

/** What a verify found (docs/api.md, "Verify"), in words. */
function foundLine(c: Counts): string {
  return [
    `${c.equal ?? 0} equal`,
    `${c.differ ?? 0} differ`,
    `${c.missing_in_destination ?? 0} missing in destination`,
    `${c.missing_in_source ?? 0} missing in source`,
  ].join(', ');
}

/**
 * How a copy's or sync's written objects were proven (docs/api.md, "Verification"): by a hash each, or
 * how many by their size alone. Nothing for a job that wrote nothing, or whose objects are not copies.
 */
function proofLine(j: Pick<Job, 'kind' | 'counts'>): string | undefined {
  const sizeOnly = j.counts.size_only ?? 0;
  if (sizeOnly > 0)
    return `${sizeOnly} of ${j.counts.succeeded} written proven by size only (no hash both sides report)`;
  if ((j.kind === 'copy' || j.kind === 'sync') && j.counts.succeeded > 0)
    return 'every object written proven by checksum';
  return undefined;
}

/** How a transfer's bytes were proven: by checksum, with the kinds, or by size only. */
function transferProof(t: Pick<Transfer, 'verified' | 'verified_by'>): string | undefined {
  if (t.verified === 'checksum') return `checksum${t.verified_by ? ` (${t.verified_by})` : ''}`;
  if (t.verified === 'size') return 'size only (no hash both sides report)';
  return undefined;
}

export function showJob(j: Job, labels = new Map<string, string>()): string {
  const side = (s: { id: string; path: string }) => `${labels.get(s.id) ?? s.id}:${s.path}`;
  const verify = j.kind === 'verify';
  return fields([
    ['job', j.job_id],
    ...(verify ? ([['kind', `verify (${j.mode ?? 'checksum'})`]] as const) : []),
    ['status', j.status],
    ['from', side(j.from)],
    ['to', side(j.to)],
    ['overwrite', verify ? undefined : j.overwrite],
    ['backup to', j.backup_to],
    ['undo of', j.undo_of],
    ['objects', objectsLine(j.counts, verify ? 'compared' : 'copied', j.delete === true)],
    ['found', verify ? foundLine(j.counts) : undefined],
    ['proven', verify ? undefined : proofLine(j)],
    ['bytes', size(j.bytes_done)],
    ['created', time(j.created_at)],
    ['finished', j.finished_at ? time(j.finished_at) : undefined],
    ['error', j.error],
  ]);
}

export function showTransfer(t: Transfer): string {
  return fields([
    ['transfer', t.id],
    ['kind', t.kind],
    ['status', t.status],
    ['from', givenText(t.from) || undefined],
    ['to', t.to === undefined ? undefined : givenText(t.to)],
    ['backup to', t.backup_to],
    ['objects', t.counts === undefined ? undefined : objectsLine(t.counts, 'done')],
    ['proven', transferProof(t)],
    ['bytes', transferBytes(t)],
    ['created', time(t.created_at)],
    ['finished', t.finished_at ? time(t.finished_at) : undefined],
    ['error', t.error],
  ]);
}

/** What to do next about a job that did not complete. */
export const jobHint = (id: string) =>
  `ferry jobs show ${id} lists the failures; ferry jobs retry ${id} tries them again`;

export async function watchJob(ctx: Context, id: string, intervalSeconds: number): Promise<void> {
  const states = follow(ctx.api(), 'job', id, intervalSeconds * 1000);
  await watch(ctx, states, jobProgress, showJob, { tty: process.stderr.isTTY === true, hint: jobHint(id) });
}

export async function watchTransfer(ctx: Context, id: string, intervalSeconds: number): Promise<void> {
  const states = follow(ctx.api(), 'transfer', id, intervalSeconds * 1000);
  await watch(ctx, states, transferProgress, showTransfer, { tty: process.stderr.isTTY === true });
}

export function jobCommands(cli: Cli): Cli {
  const id = { type: 'string', demandOption: true, describe: 'the job id' } as const;
  return cli
    .command('jobs', 'bulk copy jobs: list (default), show, watch, report, retry, cancel, undo', (y) =>
      y
        .command(
          ['list', '$0'],
          'list jobs, newest first',
          (c) => c.options(pageOptions),
          async (argv) => {
            const ctx = contextFor(argv);
            const page = await ctx.api().get('/v1/jobs', { query: query(argv) });
            const labels =
              ctx.json || page.jobs.length === 0 ? new Map<string, string>() : await labelsOf(ctx);
            ctx.print(page, () =>
              page.jobs.length === 0
                ? 'no jobs'
                : table(page.jobs, [
                    { header: 'JOB', value: (j) => j.job_id },
                    { header: 'STATUS', value: (j) => j.status },
                    { header: 'FROM → TO', value: (j) => jobFromTo(j, labels) },
                    { header: 'OBJECTS', value: counts, right: true },
                    { header: 'BYTES', value: (j) => size(j.bytes_done), right: true },
                    { header: 'CREATED', value: (j) => time(j.created_at) },
                  ]),
            );
            nextPage(ctx, 'jobs', page.next_cursor);
          },
        )
        .command(
          'show <id>',
          'show a job and its first failures',
          (c) => c.positional('id', id),
          async (argv) => {
            const ctx = contextFor(argv);
            const job = await ctx.api().get('/v1/jobs/{id}', { id: argv.id });
            if (ctx.json) return ctx.print(job, () => undefined);
            const failures = await firstFailures(ctx, 'jobs', argv.id, job.counts.failed);
            const labels = await labelsOf(ctx);
            ctx.print(job, () => showJob(job, labels) + failuresTable(failures));
          },
        )
        .command(
          'watch <id>',
          'follow a job to its end (exit 0 complete, 6 otherwise)',
          (c) => c.positional('id', id).options(watchOptions),
          (argv) => watchJob(contextFor(argv), argv.id, argv.interval),
        )
        .command(
          'report <id>',
          'every object of a job with its outcome (NDJSON, or --csv), to stdout or -o FILE',
          (c) => c.positional('id', id).options(reportOptions),
          (argv) =>
            saveReport(contextFor(argv), `/v1/jobs/${encodeURIComponent(argv.id)}`, argv.csv, argv.output),
        )
        .command(
          'retry <id>',
          'copy the failed objects of a partial or failed job again',
          (c) => c.positional('id', id),
          async (argv) => {
            const ctx = contextFor(argv);
            const r = await ctx.api().send('POST', '/v1/jobs/{id}/retry', { id: argv.id, body: {} });
            ctx.print(r, () => `job ${r.job_id} ${r.status}; ferry jobs watch ${r.job_id} follows it`);
          },
        )
        .command(
          'cancel <id>',
          'cancel a job that has not finished',
          (c) => c.positional('id', id),
          async (argv) => {
            const ctx = contextFor(argv);
            const r = await ctx.api().send('POST', '/v1/jobs/{id}/cancel', { id: argv.id, body: {} });
            ctx.print(r, () => `job ${r.job_id} ${r.status}`);
          },
        )
        .command(
          'undo <id>',
          'put back what a finished job, move or remove changed: remove what it created, restore what it deleted or overwrote from its --backup-to',
          (c) =>
            c
              .positional('id', { ...id, describe: 'the job id, or a move or remove transfer id' })
              .option('watch', {
                alias: 'w',
                type: 'boolean',
                describe: 'follow the undo to its end (exit 0 complete, 6 otherwise)',
              }),
          async (argv) => {
            const ctx = contextFor(argv);
            const r = await ctx.api().send('POST', '/v1/jobs/{id}/undo', { id: argv.id, body: {} });
            if (argv.watch === true) return watchJob(ctx, r.job_id, 1);
            ctx.print(r, () => `undo job ${r.job_id} ${r.status}; ferry jobs watch ${r.job_id} follows it`);
          },
        ),
    )
    .command(
      'transfers',
      'single copies, moves, removals and pulls: list (default), show, watch, retry',
      (y) =>
        y
          .command(
            ['list', '$0'],
            'list transfers, newest first',
            (c) => c.options(pageOptions),
            async (argv) => {
              const ctx = contextFor(argv);
              const page = await ctx.api().get('/v1/transfers', { query: query(argv) });
              ctx.print(page, () =>
                page.transfers.length === 0
                  ? 'no transfers'
                  : table(page.transfers, [
                      { header: 'TRANSFER', value: (t) => t.id },
                      { header: 'KIND', value: (t) => t.kind },
                      { header: 'STATUS', value: (t) => t.status },
                      { header: 'FROM → TO', value: fromTo },
                      {
                        header: 'OBJECTS',
                        value: (t) => (t.counts ? counts({ counts: t.counts }) : ''),
                        right: true,
                      },
                      { header: 'BYTES', value: transferBytes, right: true },
                      { header: 'CREATED', value: (t) => time(t.created_at) },
                      { header: 'ERROR', value: (t) => t.error ?? '' },
                    ]),
              );
              nextPage(ctx, 'transfers', page.next_cursor);
            },
          )
          .command(
            'show <id>',
            'show a transfer',
            (c) => c.positional('id', { ...id, describe: 'the transfer id' }),
            async (argv) => {
              const ctx = contextFor(argv);
              const t = await ctx.api().get('/v1/transfers/{id}', { id: argv.id });
              if (ctx.json) return ctx.print(t, () => undefined);
              const failures = await firstFailures(ctx, 'transfers', argv.id, t.counts?.failed ?? 0);
              ctx.print(t, () => showTransfer(t) + failuresTable(failures));
            },
          )
          .command(
            'retry <id>',
            'run the failed objects of a failed transfer over several objects again',
            (c) => c.positional('id', { ...id, describe: 'the transfer id' }),
            async (argv) => {
              const ctx = contextFor(argv);
              const r = await ctx.api().send('POST', '/v1/transfers/{id}/retry', { id: argv.id, body: {} });
              ctx.print(r, () => `transfer ${r.id} ${r.status}; ferry transfers watch ${r.id} follows it`);
            },
          )
          .command(
            'watch <id>',
            'follow a transfer to its end (exit 0 complete, 6 failed)',
            (c) => c.positional('id', { ...id, describe: 'the transfer id' }).options(watchOptions),
            (argv) => watchTransfer(contextFor(argv), argv.id, argv.interval),
          ),
    );
}
