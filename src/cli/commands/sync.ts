// `ferry sync` and `ferry plans …` (docs/cli.md, "Sync" and "Plans"; docs/api.md, "Sync", "Filters" and
// "Plans"): a one-way mirror run by the server, its dry run printed as a plan, and a plan run exactly as
// it was shown. The filter options are shared with `ferry cp` of a prefix.
import type { Accepted, Filter, Plan, PlanEntry } from '../../api/routes.js';
import { type Cli, type Context, contextFor } from '../context.js';
import { usageError } from '../exit.js';
import { count, size, table, time } from '../format.js';
import { requireScope } from '../scopes.js';
import { colonForm } from '../targets.js';
import { watchJob, watchTransfer } from './jobs.js';

/** What a sync's --delete does, as a refusal for a key without `remove` names it. */
export const DELETE_NEEDS = '--delete (removing what the source lacks)';

/** The default cap of --delete (docs/api.md, "Sync"), as help and `schedules show` say it. */
export const MAX_DELETE_DEFAULT = "half of the destination's objects or 1000, whichever is fewer";

/** `--backup-to` on rm, mv, sync and cp (docs/api.md, "Undo"): where what the work replaces is kept. */
export const backupOption = {
  'backup-to': {
    type: 'string',
    describe:
      'location:bucket/prefix/ where every object it deletes or overwrites is kept first, under the job id (ferry jobs undo ID puts them back)',
  },
} as const;

/** The body field of --backup-to, in the colon form the API takes. */
export function backupOf(argv: { backupTo?: string | undefined }): { backup_to?: string } {
  return argv.backupTo === undefined ? {} : { backup_to: colonForm(argv.backupTo) };
}

export const filterOptions = {
  include: {
    type: 'string',
    array: true,
    describe:
      'only objects matching this pattern (without "/" it matches a name at any depth, with "/" it is anchored at the source prefix; repeat for several)',
  },
  exclude: {
    type: 'string',
    array: true,
    describe:
      'leave out objects matching this pattern (e.g. "*.tmp" at any depth, "logs/**" at the top; repeat for several)',
  },
  'min-size': { type: 'string', describe: 'only objects of at least this size (bytes, or 10K, 5M, 2G)' },
  'max-size': { type: 'string', describe: 'only objects of at most this size' },
  'modified-after': { type: 'string', describe: 'only objects modified after this time (RFC 3339)' },
  'modified-before': { type: 'string', describe: 'only objects modified before this time (RFC 3339)' },
} as const;

export interface FilterArgv {
  include?: string[] | undefined;
  exclude?: string[] | undefined;
  minSize?: string | undefined;
  maxSize?: string | undefined;
  modifiedAfter?: string | undefined;
  modifiedBefore?: string | undefined;
}

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** "1048576", "10K", "5M", "2G" (binary units, an optional trailing B or iB) → bytes; usage error otherwise. */
export function parseSize(text: string, option: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?$/i.exec(text.trim());
  const unit = UNITS[(m?.[2] ?? '').toLowerCase()];
  if (!m || unit === undefined)
    throw usageError(`--${option} ${JSON.stringify(text)} is not a size: write bytes, or 10K, 5M, 2G`);
  return Math.round(Number(m[1]) * unit);
}

/** The `filter` body of the filter options, or undefined when none is given. */
export function filterOf(argv: FilterArgv): Filter | undefined {
  const filter: Filter = {};
  if (argv.include?.length) filter.include = argv.include;
  if (argv.exclude?.length) filter.exclude = argv.exclude;
  if (argv.minSize !== undefined) filter.min_size = parseSize(argv.minSize, 'min-size');
  if (argv.maxSize !== undefined) filter.max_size = parseSize(argv.maxSize, 'max-size');
  if (argv.modifiedAfter !== undefined) filter.modified_after = argv.modifiedAfter;
  if (argv.modifiedBefore !== undefined) filter.modified_before = argv.modifiedBefore;
  return Object.keys(filter).length === 0 ? undefined : filter;
}

/** An entry's one line: what would be done to what. */
function entryTarget(e: PlanEntry): string {
  if (e.from !== undefined && e.to !== undefined) return `${e.from} → ${e.to}`;
  return e.key ?? e.path ?? '';
}

function countsLine(counts: Record<string, number>): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([what, n]) => `${n} ${what}`);
  return parts.length === 0 ? 'nothing to do' : parts.join(', ');
}

/** A plan as people read it: its entries (this page), its counts, and how to run it. */
export function showPlan(plan: Plan, shown = plan.entries): string {
  const listing =
    shown.length === 0
      ? ''
      : `${table(shown, [
          { header: 'ACTION', value: (e) => e.action ?? '' },
          {
            header: 'SIZE',
            value: (e) => (e.size === undefined || e.size === null ? '-' : size(e.size)),
            right: true,
          },
          { header: 'OBJECT', value: entryTarget },
          // A plan's entries carry no reason (src/api/plans.ts): the column, which docs/cli.md shows,
          // stays empty.
          { header: 'WHY', value: () => '' },
        ])}\n`;
  const more =
    plan.next_cursor === undefined
      ? ''
      : `\n(first ${count(shown.length, 'entry')}; ferry plans show ${plan.plan_id} --all lists every one)`;
  return `${listing}plan ${plan.plan_id}: ${countsLine(plan.counts)}; expires ${time(plan.expires_at)}${more}\nferry plans run ${plan.plan_id} does exactly this`;
}

async function followAccepted(ctx: Context, r: Accepted, what: string, follow: boolean): Promise<void> {
  if ('job_id' in r) {
    if (follow) return watchJob(ctx, r.job_id, 1);
    return ctx.print(r, () => `${what} job ${r.job_id} ${r.status}\nferry jobs watch ${r.job_id} follows it`);
  }
  if (follow) return watchTransfer(ctx, r.id, 1);
  return ctx.print(
    r,
    () => `${what} ${r.status}: transfer ${r.id}\nferry transfers watch ${r.id} follows it`,
  );
}

/** Every entry of a plan, page after page (`--all`): bounded by the plan's own limit (100,000). */
async function allEntries(ctx: Context, plan: Plan): Promise<PlanEntry[]> {
  const entries = [...plan.entries];
  let cursor = plan.next_cursor;
  while (cursor !== undefined) {
    const page = await ctx.api().get('/v1/plans/{id}', { id: plan.plan_id, query: { cursor } });
    entries.push(...page.entries);
    cursor = page.next_cursor;
  }
  return entries;
}

export function syncCommands(cli: Cli): Cli {
  return cli
    .command(
      'sync <src> <dst>',
      'make a prefix hold what another holds: copy what is missing or different, and with --delete remove what the source lacks',
      (y) =>
        y
          .positional('src', { type: 'string', demandOption: true, describe: 'location:bucket/prefix/' })
          .positional('dst', { type: 'string', demandOption: true, describe: 'location:bucket/prefix/' })
          .option('compare', {
            choices: ['size-modtime', 'checksum', 'size'] as const,
            describe: 'how objects are found equal (default size-modtime; docs/api.md, "Sync")',
          })
          .option('delete', {
            type: 'boolean',
            describe: 'remove destination objects the source lacks, once every copy succeeded',
          })
          .option('max-delete', {
            type: 'number',
            describe: `with --delete: fail, removing nothing, when more would go (default: ${MAX_DELETE_DEFAULT})`,
          })
          .option('bandwidth', {
            type: 'string',
            describe: 'cap the job at this many bytes a second (e.g. 10M)',
          })
          .options(filterOptions)
          .options(backupOption)
          .option('dry-run', {
            alias: 'n',
            type: 'boolean',
            describe: 'print the plan (what would be copied and removed) and change nothing',
          })
          .option('watch', {
            alias: 'w',
            type: 'boolean',
            describe: 'follow the job to its end (exit 0 complete, 6 otherwise)',
          })
          .example('$0 sync photos:my-bucket/2026/ archive:backup/2026/ -w', '')
          .example('$0 sync photos:my-bucket/site/ archive:site/ --delete --dry-run', 'see what would change')
          .example('$0 sync photos:my-bucket/ archive:all/ --exclude "tmp/**" --exclude "*.part"', ''),
      async (argv) => {
        const ctx = contextFor(argv);
        if (argv.maxDelete !== undefined && argv.delete !== true)
          throw usageError('--max-delete bounds --delete: give --delete too');
        const filter = filterOf(argv);
        const body = {
          from: colonForm(argv.src),
          to: colonForm(argv.dst),
          ...(argv.compare === undefined ? {} : { compare: argv.compare }),
          ...(argv.delete === true ? { delete: true } : {}),
          ...(argv.maxDelete === undefined ? {} : { max_delete: argv.maxDelete }),
          ...(argv.bandwidth === undefined
            ? {}
            : { bandwidth_limit: parseSize(argv.bandwidth, 'bandwidth') }),
          ...(filter === undefined ? {} : { filter }),
          ...backupOf(argv),
        };
        if (argv.dryRun) {
          if (argv.backupTo !== undefined) throw usageError('--backup-to is not taken with --dry-run');
          const plan = await ctx.api().send('POST', '/v1/sync', { body: { ...body, dry_run: true } });
          return ctx.print(plan, () => showPlan(plan));
        }
        if (argv.delete === true) await requireScope(ctx.api(), 'remove', DELETE_NEEDS, 'leave out --delete');
        const r = await ctx.api().send('POST', '/v1/sync', { body });
        return followAccepted(ctx, r, 'sync', argv.watch === true);
      },
    )
    .command('plans', 'show and run plans, the previews that bind (docs/cli.md, "Plans")', (y) =>
      y
        .command(
          'show <id>',
          'what a plan would do: its counts and entries',
          (c) =>
            c
              .positional('id', { type: 'string', demandOption: true, describe: 'the plan id' })
              .option('all', { type: 'boolean', describe: 'every entry, not only the first page' }),
          async (argv) => {
            const ctx = contextFor(argv);
            const plan = await ctx.api().get('/v1/plans/{id}', { id: argv.id });
            let shown = plan;
            if (argv.all) {
              const { next_cursor: _more, ...rest } = plan;
              shown = { ...rest, entries: await allEntries(ctx, plan) };
            }
            ctx.print(shown, () => showPlan(shown));
          },
        )
        .command(
          'run <id>',
          'run exactly what the plan lists: an object changed or added since is left alone and reported',
          (c) =>
            c
              .positional('id', { type: 'string', demandOption: true, describe: 'the plan id' })
              .option('watch', {
                alias: 'w',
                type: 'boolean',
                describe: 'follow the work to its end (exit 0 complete, 6 otherwise)',
              }),
          async (argv) => {
            const ctx = contextFor(argv);
            const r = await ctx.api().send('POST', '/v1/plans/{id}/run', { id: argv.id, body: {} });
            return followAccepted(ctx, r, 'plan', argv.watch === true);
          },
        )
        .demandCommand(1, 'name a plans command: show or run'),
    );
}
