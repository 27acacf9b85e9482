// `ferry schedules …` (docs/api.md, "Schedules"): list (default), create, show, pause, resume, run, rm.
// create takes every field of POST /v1/schedules, and list and show say them back: a copy's manifest
// and overwrite, a sync's compare and delete cap, a verify's mode, the filter, the bandwidth limit.
import type { BodyOf, Filter, Job, Schedule, ScheduleWithRuns } from '../../api/routes.js';
import { scheduleRunText } from '../../display.js';
import { VERIFY_MODES } from '../../states.js';
import { type Cli, contextFor } from '../context.js';
import { usageError } from '../exit.js';
import { fields, size, table, time, zonedTime } from '../format.js';
import { requireScope } from '../scopes.js';
import { colonForm } from '../targets.js';
import { readManifest } from './bulk.js';
import { DELETE_NEEDS, filterOf, filterOptions, MAX_DELETE_DEFAULT, parseSize } from './sync.js';

/**
 * A copy's, a sync's or a verify's body as a schedule holds it (docs/api.md, "Copy", "Sync", "Verify"):
 * any field of the three, as a schedule answers its action as given.
 */
type ActionBody = Partial<
  BodyOf<'POST', '/v1/copy'> & BodyOf<'POST', '/v1/sync'> & BodyOf<'POST', '/v1/verify'>
>;

function actionOf(action: Schedule['action']): { kind: string; body: ActionBody } {
  const [kind, body] = Object.entries(action)[0] ?? ['?', {}];
  return { kind, body: body && typeof body === 'object' ? (body as ActionBody) : {} };
}

function side(s: unknown): string {
  if (typeof s === 'string') return s;
  if (s && typeof s === 'object') {
    const t = s as { name?: string; id?: string; path?: string };
    return `${t.name ?? t.id}:${t.path}`;
  }
  return '?';
}

/** A filter in words: `exclude *.tmp, .DS_Store; at least 1.0 KiB; modified after …`. */
export function filterText(filter: Filter | undefined): string | undefined {
  if (!filter) return undefined;
  const parts = [
    filter.include?.length ? `include ${filter.include.join(', ')}` : undefined,
    filter.exclude?.length ? `exclude ${filter.exclude.join(', ')}` : undefined,
    filter.min_size === undefined ? undefined : `at least ${size(filter.min_size)}`,
    filter.max_size === undefined ? undefined : `at most ${size(filter.max_size)}`,
    filter.modified_after === undefined ? undefined : `modified after ${time(filter.modified_after)}`,
    filter.modified_before === undefined ? undefined : `modified before ${time(filter.modified_before)}`,
  ].filter((p) => p !== undefined);
  return parts.length === 0 ? undefined : parts.join('; ');
}

/** A sync's delete and its cap: `at most 50`, or the default said in words. */
function deleteText(body: ActionBody): string | undefined {
  if (body.delete !== true) return undefined;
  return `what the source lacks, at most ${body.max_delete ?? `${MAX_DELETE_DEFAULT} (the default)`}`;
}

/** What a schedule runs, in one line: `sync photos:b/2026/ → archive:backup/2026/ (delete ≤ 50; exclude *.tmp)`. */
export function actionText(action: Schedule['action']): string {
  const { kind, body } = actionOf(action);
  const notes = [
    body.delete === true ? `delete ≤ ${body.max_delete ?? 'default'}` : undefined,
    filterText(body.filter),
  ].filter((n) => n !== undefined);
  return `${kind} ${side(body.from)} → ${side(body.to)}${notes.length ? ` (${notes.join('; ')})` : ''}`;
}

/**
 * When a schedule runs next, in the schedule's own zone and naming it ("Thu 2026-12-03 02:00
 * (Europe/Berlin)"): "every day at 02:00" is read in that zone, so its next run is said there too.
 */
function nextRun(s: Schedule): string {
  return s.paused ? 'paused' : s.next_run_at ? zonedTime(s.next_run_at, s.timezone) : '-';
}

/**
 * A schedule, its settings one a line, and its recent runs; `jobs` (the schedule's jobs, from
 * `GET /v1/jobs?schedule_id=`) says how each started run stands now: finished, failed, running.
 */
export function showSchedule(
  s: Schedule | ScheduleWithRuns,
  jobs: ReadonlyMap<string, Job> = new Map(),
): string {
  const { kind, body } = actionOf(s.action);
  const head = fields([
    ['schedule', s.id],
    ['name', s.name],
    ['every', s.every === s.cron ? s.every : `${s.every} (${s.cron})`],
    ['timezone', s.timezone],
    ['action', `${kind} ${side(body.from)} → ${side(body.to)}`],
    ['manifest', Array.isArray(body.manifest) ? `${body.manifest.length} keys` : undefined],
    ['overwrite', body.overwrite],
    ['compare', body.compare],
    ['mode', body.mode],
    ['delete', deleteText(body)],
    ['filter', filterText(body.filter)],
    ['bandwidth', body.bandwidth_limit === undefined ? undefined : `${size(body.bandwidth_limit)}/s`],
    ['paused', s.paused ? 'yes' : undefined],
    ['next run', s.paused || !s.next_run_at ? undefined : nextRun(s)],
    ['last run', s.last_run_at ? time(s.last_run_at) : undefined],
    ['last job', s.last_job_id],
  ]);
  if (!('runs' in s) || s.runs.length === 0) return head;
  return `${head}\n\nruns:\n${table(s.runs, [
    { header: 'DUE', value: (r) => time(r.due_at) },
    {
      header: 'OUTCOME',
      value: (r) => scheduleRunText(r.outcome, r.job_id ? jobs.get(r.job_id) : undefined).words,
    },
    { header: 'JOB', value: (r) => r.job_id ?? '' },
    { header: 'REASON', value: (r) => r.reason ?? '' },
  ])}`;
}

export function scheduleCommands(cli: Cli): Cli {
  const id = { type: 'string', demandOption: true, describe: 'the schedule id' } as const;
  return cli.command(
    'schedules',
    'recurring copies, syncs and verifies: list (default), create, show, pause, resume, run, rm',
    (y) =>
      y
        .command(
          ['list', '$0'],
          'list schedules, newest first',
          (c) => c.options({ limit: { type: 'number', default: 100, describe: 'how many (1 to 1000)' } }),
          async (argv) => {
            const ctx = contextFor(argv);
            const page = await ctx.api().get('/v1/schedules', { query: { limit: String(argv.limit) } });
            ctx.print(page, () =>
              page.schedules.length === 0
                ? 'no schedules'
                : table(page.schedules, [
                    { header: 'SCHEDULE', value: (s) => s.id },
                    { header: 'NAME', value: (s) => s.name },
                    { header: 'EVERY', value: (s) => s.every },
                    { header: 'NEXT RUN', value: nextRun },
                    { header: 'ACTION', value: (s) => actionText(s.action) },
                  ]),
            );
          },
        )
        .command(
          'create <name>',
          'create a schedule: --every and one of --copy FROM TO, --sync FROM TO or --verify FROM TO',
          (c) =>
            c
              .positional('name', { type: 'string', demandOption: true, describe: 'what to call it' })
              .options({
                every: {
                  type: 'string',
                  demandOption: true,
                  describe: 'a cron expression or words: "every day at 02:00", "every monday at 9am"',
                },
                timezone: { type: 'string', describe: 'IANA time zone of --every (default UTC)' },
                copy: {
                  type: 'string',
                  array: true,
                  nargs: 2,
                  describe: 'copy FROM/ TO/ (prefixes) at each run',
                },
                sync: { type: 'string', array: true, nargs: 2, describe: 'sync FROM/ TO/ at each run' },
                verify: {
                  type: 'string',
                  array: true,
                  nargs: 2,
                  describe: 'verify FROM/ TO/ at each run: compare them, changing nothing',
                },
                mode: {
                  choices: VERIFY_MODES,
                  describe: 'with --verify: checksum (default), download (read both sides) or size',
                },
                manifest: {
                  type: 'string',
                  describe:
                    'with --copy: only these keys (a file, one a line, relative to FROM; - reads stdin)',
                },
                overwrite: {
                  choices: ['always', 'if-missing'] as const,
                  describe:
                    'with --copy: replace objects at the destination (always, the default) or skip them',
                },
                compare: {
                  choices: ['size-modtime', 'checksum', 'size'] as const,
                  describe: 'with --sync: how objects are found equal (default size-modtime)',
                },
                delete: { type: 'boolean', describe: 'with --sync: remove what the source lacks' },
                'max-delete': {
                  type: 'number',
                  describe: `with --delete: fail the run, removing nothing, when more would go (default: ${MAX_DELETE_DEFAULT})`,
                },
                bandwidth: {
                  type: 'string',
                  describe: 'cap each run at this many bytes a second (e.g. 10M)',
                },
                paused: { type: 'boolean', describe: 'create it paused' },
              })
              .options(filterOptions)
              .example(
                '$0 schedules create mirror --every "every 15 minutes" --sync photos:b/site/ archive:site/ --delete --max-delete 50 --exclude "*.tmp"',
                '',
              ),
          async (argv) => {
            const ctx = contextFor(argv);
            const given = [argv.copy, argv.sync, argv.verify].filter((a) => a !== undefined).length;
            if (given !== 1)
              throw usageError('give one of --copy FROM TO, --sync FROM TO or --verify FROM TO');
            const onlyWith = (kind: '--copy' | '--sync' | '--verify', given: Record<string, unknown>) => {
              const wrong = Object.entries(given).find(([, v]) => v !== undefined)?.[0];
              if (wrong) throw usageError(`${wrong} goes with ${kind}`);
            };
            const syncOnly = {
              '--compare': argv.compare,
              '--delete': argv.delete,
              '--max-delete': argv.maxDelete,
            };
            const copyOnly = { '--manifest': argv.manifest, '--overwrite': argv.overwrite };
            if (argv.verify === undefined) onlyWith('--verify', { '--mode': argv.mode });
            if (argv.copy !== undefined) onlyWith('--sync', syncOnly);
            else if (argv.sync !== undefined) onlyWith('--copy', copyOnly);
            else {
              onlyWith('--sync', syncOnly);
              onlyWith('--copy', copyOnly);
              // A verify moves no bytes through ferry but what it reads: it takes no cap (docs/api.md, "Verify").
              if (argv.bandwidth !== undefined) throw usageError('--bandwidth goes with --copy or --sync');
            }
            if (argv.maxDelete !== undefined && argv.delete !== true)
              throw usageError('--max-delete bounds --delete: give --delete too');
            const [from, to] = (argv.copy ?? argv.sync ?? argv.verify ?? []).map(String);
            if (from === undefined || to === undefined)
              throw usageError('--copy, --sync and --verify take FROM and TO');
            const filter = filterOf(argv);
            const where = {
              from: colonForm(from),
              to: colonForm(to),
              ...(filter === undefined ? {} : { filter }),
            };
            const common = {
              ...where,
              ...(argv.bandwidth === undefined
                ? {}
                : { bandwidth_limit: parseSize(argv.bandwidth, 'bandwidth') }),
            };
            const action: BodyOf<'POST', '/v1/schedules'>['action'] =
              argv.copy !== undefined
                ? {
                    copy: {
                      ...common,
                      ...(argv.manifest === undefined ? {} : { manifest: readManifest(argv.manifest) }),
                      ...(argv.overwrite === undefined ? {} : { overwrite: argv.overwrite }),
                    },
                  }
                : argv.sync !== undefined
                  ? {
                      sync: {
                        ...common,
                        ...(argv.compare === undefined ? {} : { compare: argv.compare }),
                        ...(argv.delete ? { delete: true } : {}),
                        ...(argv.maxDelete === undefined ? {} : { max_delete: argv.maxDelete }),
                      },
                    }
                  : { verify: { ...where, ...(argv.mode === undefined ? {} : { mode: argv.mode }) } };
            if (argv.delete === true)
              await requireScope(ctx.api(), 'remove', DELETE_NEEDS, 'leave out --delete');
            const created = await ctx.api().send('POST', '/v1/schedules', {
              body: {
                name: argv.name,
                every: argv.every,
                ...(argv.timezone === undefined ? {} : { timezone: argv.timezone }),
                action,
                ...(argv.paused ? { paused: true } : {}),
              },
            });
            ctx.print(created, () => showSchedule(created));
          },
        )
        .command(
          'show <id>',
          'show a schedule and its recent runs',
          (c) => c.positional('id', id),
          async (argv) => {
            const ctx = contextFor(argv);
            const [s, page] = await Promise.all([
              ctx.api().get('/v1/schedules/{id}', { id: argv.id }),
              ctx.api().get('/v1/jobs', { query: { schedule_id: argv.id, limit: '50' } }),
            ]);
            ctx.print(s, () => showSchedule(s, new Map(page.jobs.map((j) => [j.job_id, j]))));
          },
        )
        .command(
          'pause <id>',
          'pause a schedule (it has no next run until resumed)',
          (c) => c.positional('id', id),
          async (argv) => {
            const ctx = contextFor(argv);
            const s = await ctx
              .api()
              .send('PATCH', '/v1/schedules/{id}', { id: argv.id, body: { paused: true } });
            ctx.print(s, () => `schedule ${s.id} paused`);
          },
        )
        .command(
          'resume <id>',
          'resume a paused schedule (its next run is computed from now)',
          (c) => c.positional('id', id),
          async (argv) => {
            const ctx = contextFor(argv);
            const s = await ctx
              .api()
              .send('PATCH', '/v1/schedules/{id}', { id: argv.id, body: { paused: false } });
            ctx.print(s, () => `schedule ${s.id} resumed; next run ${nextRun(s)}`);
          },
        )
        .command(
          'run <id>',
          'run a schedule now',
          (c) => c.positional('id', id),
          async (argv) => {
            const ctx = contextFor(argv);
            const r = await ctx.api().send('POST', '/v1/schedules/{id}/run', { id: argv.id, body: {} });
            ctx.print(r, () => `job ${r.job_id} ${r.status}; ferry jobs watch ${r.job_id} follows it`);
          },
        )
        .command(
          'rm <id>',
          'delete a schedule (the jobs it started stay)',
          (c) => c.positional('id', id),
          async (argv) => {
            const ctx = contextFor(argv);
            await ctx.api().send('DELETE', '/v1/schedules/{id}', { id: argv.id });
            ctx.print({ id: argv.id, deleted: true }, () => `schedule ${argv.id} deleted`);
          },
        ),
  );
}
