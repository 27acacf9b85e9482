// Paging of every list (docs/api.md, "Polling"): `?limit=` read once, and lists newest first (created_at
// descending, then id) paged by an opaque cursor that holds the last row's time and id.
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

/** Rows after the cursor in newest-first order: created_at descending, then id ascending for ties. */
function afterCursor(cursor: string | undefined) {
  if (cursor === undefined) return sql<boolean>`1 = 1`;
  const after = decodeCursor(cursor);
  return sql<boolean>`(created_at < ${after.createdAt} or (created_at = ${after.createdAt} and id > ${after.id}))`;
}

/** The page and, when more rows follow, the cursor of its last row (rows were read with limit + 1). */
function pageOf<R extends { created_at: number; id: string }>(
  rows: R[],
  limit: number,
): { rows: R[]; next_cursor?: string } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    rows: page,
    ...(rows.length > limit && last ? { next_cursor: encodeCursor(last.created_at, last.id) } : {}),
  };
}

/** The tables listed newest first per workspace (transfers, jobs, shares). */
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
  // One query for the three tables: they share the columns it reads (workspace_id, created_at, id).
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
  );
}
