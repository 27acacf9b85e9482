// Paging of every list (docs/api.md, "Polling"): `?limit=` read once; lists newest first (a time
// descending, then id) paged by an opaque cursor that holds the last row's time and id, lists in order
// of a sequence number (a plan's entries, a job's failures) by one that holds the last one's; and the
// page cut from limit + 1 rows. Every list's cursor is made and read here.
import { type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import { invalid } from '../errors.js';
import { isUuid } from '../ids.js';
import type { Database } from './schema.js';

export interface Page<T> {
  items: T[];
  next_cursor?: string;
}

export const PAGE_DEFAULT = 100;
export const PAGE_MAX = 1000;

export function parseLimit(limit: string | undefined): number {
  if (limit === undefined) return PAGE_DEFAULT;
  const n = Number(limit);
  if (!Number.isInteger(n) || n < 1 || n > PAGE_MAX)
    throw invalid(`limit must be a whole number from 1 to ${PAGE_MAX}`);
  return n;
}

/** Cursor for newest-first lists: the last item's creation time and id. */
export function encodeCursor(createdAt: number, id: string): string {
  return Buffer.from(`${createdAt}:${id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: number; id: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const colon = text.indexOf(':');
  const createdAt = Number(text.slice(0, colon));
  const id = text.slice(colon + 1);
  if (colon < 1 || !Number.isInteger(createdAt) || !isUuid(id)) throw invalid('cursor is not valid');
  return { createdAt, id };
}

/**
 * Rows after the cursor in newest-first order: `time` descending, then `id` for ties, ascending (the
 * lists of newestFirst, a webhook's deliveries) or descending (the audit log, a share's downloads).
 */
export function afterCursor(
  cursor: string | undefined,
  order: { time: string; id: string; ties: 'asc' | 'desc' } = { time: 'created_at', id: 'id', ties: 'asc' },
): RawBuilder<boolean> {
  if (cursor === undefined) return sql<boolean>`1 = 1`;
  const after = decodeCursor(cursor);
  const time = sql.ref(order.time);
  const id = sql.ref(order.id);
  const beyond = order.ties === 'asc' ? sql`${id} > ${after.id}` : sql`${id} < ${after.id}`;
  return sql<boolean>`(${time} < ${after.createdAt} or (${time} = ${after.createdAt} and ${beyond}))`;
}

/** Cursor for lists in the order of a sequence number (a plan's entries, a job's failures): the last one's. */
export function encodeSeqCursor(seq: number): string {
  return Buffer.from(String(seq), 'utf8').toString('base64url');
}

/** The sequence number a cursor holds; -1 (before the first) without one. */
export function decodeSeqCursor(cursor: string | undefined): number {
  if (cursor === undefined) return -1;
  const seq = Number(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!Number.isInteger(seq) || seq < 0) throw invalid('cursor is not valid');
  return seq;
}

/**
 * The page and, when more rows follow, the cursor of its last row: the rows were read with `limit + 1`,
 * so one more than the page says that another page follows.
 */
export function pageOf<R>(
  rows: R[],
  limit: number,
  cursorOf: (last: R) => string,
): { rows: R[]; next_cursor?: string } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    rows: page,
    ...(rows.length > limit && last !== undefined ? { next_cursor: cursorOf(last) } : {}),
  };
}

/** The tables listed newest first per workspace. */
type Listed = 'transfers' | 'jobs' | 'shares' | 'sends' | 'schedules';

/** One page of a workspace's rows of `table`, newest first, after `cursor`. */
export async function newestFirst<T extends Listed>(
  db: Kysely<Database>,
  table: T,
  workspaceId: string,
  limit: number,
  cursor: string | undefined,
  /** A further condition on the rows (a job's schedule_id). */
  filter: RawBuilder<boolean> = sql<boolean>`1 = 1`,
): Promise<{ rows: Selectable<Database[T]>[]; next_cursor?: string }> {
  // One query for these tables: they share the columns it reads (workspace_id, created_at, id).
  const rows = await db
    .selectFrom(table as Listed as 'transfers')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where(afterCursor(cursor))
    // A transfer's job is listed as the transfer (GET /v1/transfers), not as a job.
    .where(table === 'jobs' ? sql<boolean>`transfer_id is null` : sql<boolean>`1 = 1`)
    .where(filter)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'asc')
    .limit(limit + 1)
    .execute();
  return pageOf(
    rows as unknown as Array<Selectable<Database[T]> & { created_at: number; id: string }>,
    limit,
    (last) => encodeCursor(last.created_at, last.id),
  );
}
