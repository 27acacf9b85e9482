// `ferry audit`: the workspace's audit log (docs/api.md, "Audit log"; docs/cli.md), newest first, paged
// through next_cursor until --limit events or the end; a table, --json, or --csv (a header row, cells
// quoted and formulas neutralised as `ferry jobs report` writes them), to stdout or -o FILE (written
// beside it, then renamed, so it appears whole or not at all).
import { rename, rm, writeFile } from 'node:fs/promises';
import type { AuditAction, AuditEvent } from '../../api/routes.js';
import { csvRow } from '../../util/csv.js';
import { type Cli, type Context, contextFor } from '../context.js';
import { table, time } from '../format.js';

const COLUMNS = ['at', 'action', 'target', 'status', 'key_id', 'key_name', 'ip', 'user_agent'] as const;
/** The API's largest page. */
const PAGE_MAX = 1000;

/** The options that choose events. */
interface EventFilter {
  action?: string | undefined;
  key?: string | undefined;
  after?: string | undefined;
  before?: string | undefined;
  limit?: number | undefined;
}

/** Every event the filter matches, up to `limit`, page after page. */
async function collect(ctx: Context, filter: EventFilter): Promise<AuditEvent[]> {
  const events: AuditEvent[] = [];
  let cursor: string | undefined;
  do {
    const left = filter.limit === undefined ? PAGE_MAX : Math.min(PAGE_MAX, filter.limit - events.length);
    const page = await ctx.api().get('/v1/audit', {
      query: {
        limit: String(left),
        // As typed: the server checks it against the actions, and its refusal lists them.
        action: (filter.action || undefined) as AuditAction | undefined,
        key_id: filter.key || undefined,
        after: filter.after || undefined,
        before: filter.before || undefined,
        cursor: cursor || undefined,
      },
    });
    events.push(...page.events);
    cursor = page.next_cursor;
  } while (cursor !== undefined && (filter.limit === undefined || events.length < filter.limit));
  return events;
}

export function auditCsv(events: readonly AuditEvent[]): string {
  return (
    csvRow(COLUMNS) +
    events.map((e) => csvRow(COLUMNS.map((column) => e[column] as string | number | undefined))).join('')
  );
}

function human(events: readonly AuditEvent[]): string {
  if (events.length === 0) return 'no events';
  return table(events, [
    { header: 'AT', value: (e) => time(e.at) },
    { header: 'ACTION', value: (e) => e.action },
    { header: 'STATUS', value: (e) => String(e.status) },
    { header: 'TARGET', value: (e) => e.target ?? '' },
    { header: 'KEY', value: (e) => e.key_name ?? e.key_id ?? '' },
    { header: 'IP', value: (e) => e.ip },
  ]);
}

async function audit(
  ctx: Context,
  filter: EventFilter,
  csv: boolean,
  output: string | undefined,
): Promise<void> {
  const events = await collect(ctx, filter);
  if (output === undefined && !csv) {
    ctx.print({ events }, () => human(events));
    return;
  }
  const text = csv
    ? auditCsv(events)
    : ctx.json
      ? `${JSON.stringify({ events }, null, 2)}\n`
      : `${human(events)}\n`;
  if (output === undefined) {
    process.stdout.write(text);
    return;
  }
  const part = `${output}.part`;
  try {
    await writeFile(part, text);
    await rename(part, output);
  } catch (err) {
    await rm(part, { force: true });
    throw err;
  }
  ctx.note(`${events.length} events written to ${output}`);
}

export function auditCommand(cli: Cli): Cli {
  return cli.command(
    'audit',
    "the workspace's audit log, newest first: who changed what, share downloads (needs an admin key)",
    (y) =>
      y
        .option('action', {
          type: 'string',
          describe: 'only this action (docs/api.md, "Audit log" lists them)',
        })
        .option('key', { type: 'string', describe: "only this API key's events (its id)" })
        .option('after', { type: 'string', describe: 'only events at or after this RFC 3339 time' })
        .option('before', { type: 'string', describe: 'only events before this RFC 3339 time' })
        .option('limit', { type: 'number', describe: 'at most this many events (default: every match)' })
        .option('csv', { type: 'boolean', default: false, describe: 'CSV with a header row' })
        .option('output', { alias: 'o', type: 'string', describe: 'write to this file instead of stdout' })
        .check((argv) => {
          if (argv.limit !== undefined && (!Number.isInteger(argv.limit) || argv.limit < 1)) {
            throw new Error('--limit must be a whole number from 1');
          }
          return true;
        }),
    (argv) =>
      audit(
        contextFor(argv),
        { action: argv.action, key: argv.key, after: argv.after, before: argv.before, limit: argv.limit },
        argv.csv,
        argv.output,
      ),
  );
}
