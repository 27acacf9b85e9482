// `ferry schedules …` (docs/api.md, "Schedules"): list (default), create, show, pause, resume, run, rm.
import type { Schedule, ScheduleWithRuns } from '../../api/schedules.js';
import { type Cli, contextFor } from '../context.js';
import { usageError } from '../exit.js';
import { fields, table, time } from '../format.js';
import { colonForm } from '../targets.js';

/** What a schedule runs, in one line: `copy photos:b/2026/ → archive:backup/2026/`. */
function actionText(action: Schedule['action']): string {
  const [kind, body] = Object.entries(action)[0] ?? ['?', {}];
  const { from, to, delete: remove } = (body ?? {}) as { from?: unknown; to?: unknown; delete?: unknown };
  const side = (s: unknown) =>
    typeof s === 'string'
      ? s
      : s && typeof s === 'object'
        ? `${(s as { name?: string; id?: string }).name ?? (s as { id?: string }).id}:${(s as { path?: string }).path}`
        : '?';
  return `${kind} ${side(from)} → ${side(to)}${remove === true ? ' (delete)' : ''}`;
}

function showSchedule(s: Schedule | ScheduleWithRuns): string {
  const head = fields([
    ['schedule', s.id],
    ['name', s.name],
    ['every', s.every === s.cron ? s.every : `${s.every} (${s.cron})`],
    ['timezone', s.timezone],
    ['action', actionText(s.action)],
    ['paused', s.paused ? 'yes' : undefined],
    ['next run', s.next_run_at ? time(s.next_run_at) : undefined],
    ['last run', s.last_run_at ? time(s.last_run_at) : undefined],
    ['last job', s.last_job_id],
  ]);
  if (!('runs' in s) || s.runs.length === 0) return head;
  return `${head}\n\nruns:\n${table(s.runs, [
    { header: 'DUE', value: (r) => time(r.due_at) },
    { header: 'OUTCOME', value: (r) => r.outcome },
    { header: 'JOB', value: (r) => r.job_id ?? '' },
    { header: 'REASON', value: (r) => r.reason ?? '' },
  ])}`;
}

export function scheduleCommands(cli: Cli): Cli {
  const id = { type: 'string', demandOption: true, describe: 'the schedule id' } as const;
  const path = (scheduleId: string) => `/v1/schedules/${encodeURIComponent(scheduleId)}`;
  return cli.command(
    'schedules',
    'recurring copies and syncs: list (default), create, show, pause, resume, run, rm',
    (y) =>
      y
        .command(
          ['list', '$0'],
          'list schedules, newest first',
          (c) => c.options({ limit: { type: 'number', default: 100, describe: 'how many (1 to 1000)' } }),
          async (argv) => {
            const ctx = contextFor(argv);
            const page = await ctx
              .api()
              .get<{ schedules: Schedule[]; next_cursor?: string }>(`/v1/schedules?limit=${argv.limit}`);
            ctx.print(page, () =>
              page.schedules.length === 0
                ? 'no schedules'
                : table(page.schedules, [
                    { header: 'SCHEDULE', value: (s) => s.id },
                    { header: 'NAME', value: (s) => s.name },
                    { header: 'EVERY', value: (s) => s.every },
                    { header: 'NEXT RUN', value: (s) => (s.paused ? 'paused' : time(s.next_run_at)) },
                    { header: 'ACTION', value: (s) => actionText(s.action) },
                  ]),
            );
          },
        )
        .command(
          'create <name>',
          'create a schedule: --every and one of --copy FROM TO or --sync FROM TO',
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
                delete: { type: 'boolean', describe: 'with --sync: remove what the source lacks' },
                paused: { type: 'boolean', describe: 'create it paused' },
              }),
          async (argv) => {
            const ctx = contextFor(argv);
            if ((argv.copy === undefined) === (argv.sync === undefined))
              throw usageError('give one of --copy FROM TO or --sync FROM TO');
            if (argv.delete && argv.sync === undefined) throw usageError('--delete goes with --sync');
            const [from, to] = (argv.copy ?? argv.sync ?? []).map(String);
            if (from === undefined || to === undefined)
              throw usageError('--copy and --sync take FROM and TO');
            const targets = { from: colonForm(from), to: colonForm(to) };
            const action =
              argv.copy !== undefined
                ? { copy: targets }
                : { sync: { ...targets, ...(argv.delete ? { delete: true } : {}) } };
            const created = await ctx.api().send<Schedule>('POST', '/v1/schedules', {
              name: argv.name,
              every: argv.every,
              ...(argv.timezone === undefined ? {} : { timezone: argv.timezone }),
              action,
              ...(argv.paused ? { paused: true } : {}),
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
            const s = await ctx.api().get<ScheduleWithRuns>(path(argv.id));
            ctx.print(s, () => showSchedule(s));
          },
        )
        .command(
          'pause <id>',
          'pause a schedule (it has no next run until resumed)',
          (c) => c.positional('id', id),
          async (argv) => {
            const ctx = contextFor(argv);
            const s = await ctx.api().send<Schedule>('PATCH', path(argv.id), { paused: true });
            ctx.print(s, () => `schedule ${s.id} paused`);
          },
        )
        .command(
          'resume <id>',
          'resume a paused schedule (its next run is computed from now)',
          (c) => c.positional('id', id),
          async (argv) => {
            const ctx = contextFor(argv);
            const s = await ctx.api().send<Schedule>('PATCH', path(argv.id), { paused: false });
            ctx.print(s, () => `schedule ${s.id} resumed; next run ${time(s.next_run_at)}`);
          },
        )
        .command(
          'run <id>',
          'run a schedule now',
          (c) => c.positional('id', id),
          async (argv) => {
            const ctx = contextFor(argv);
            const r = await ctx
              .api()
              .send<{ job_id: string; status: string }>('POST', `${path(argv.id)}/run`, {});
            ctx.print(r, () => `job ${r.job_id} ${r.status}; ferry jobs watch ${r.job_id} follows it`);
          },
        )
        .command(
          'rm <id>',
          'delete a schedule (the jobs it started stay)',
          (c) => c.positional('id', id),
          async (argv) => {
            const ctx = contextFor(argv);
            await ctx.api().send('DELETE', path(argv.id));
            ctx.print({ id: argv.id, deleted: true }, () => `schedule ${argv.id} deleted`);
          },
        ),
  );
}
