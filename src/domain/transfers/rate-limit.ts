// The copy accept limit (docs/api.md, "Copy"): 30 accepts per workspace in any rolling 60 seconds,
// across all processes. The check and the insert happen in one transaction that holds a lock for
// the workspace (an advisory lock on PostgreSQL; SQLite serialises writers), so two processes cannot
// both take the 30th place.
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { FerryError } from '../../errors.js';

export const COPY_LIMIT = 30;
export const COPY_WINDOW_MS = 60_000;

/**
 * Runs `accept` inside the workspace's limit: it is called within the transaction only when a place
 * is free, and the accept is recorded with it. Otherwise rate_limited with the seconds until one frees up.
 */
export async function withinCopyLimit<T>(
  db: Kysely<Database>,
  dialect: Dialect,
  workspaceId: string,
  now: number,
  accept: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    if (dialect === 'postgres') {
      await sql`select pg_advisory_xact_lock(hashtext(${`ferry-copy-limit:${workspaceId}`}))`.execute(trx);
    }
    const since = now - COPY_WINDOW_MS;
    await trx
      .deleteFrom('copy_accepts')
      .where('workspace_id', '=', workspaceId)
      .where('accepted_at', '<=', since)
      .execute();
    const recent = await trx
      .selectFrom('copy_accepts')
      .select('accepted_at')
      .where('workspace_id', '=', workspaceId)
      .where('accepted_at', '>', since)
      .orderBy('accepted_at', 'asc')
      .limit(COPY_LIMIT)
      .execute();
    if (recent.length >= COPY_LIMIT) {
      const oldest = recent[0]?.accepted_at ?? now;
      const wait = Math.max(1, Math.ceil((oldest + COPY_WINDOW_MS - now) / 1000));
      throw new FerryError(
        'rate_limited',
        `at most ${COPY_LIMIT} copies may be accepted per minute; retry in ${wait} s`,
        {
          retryAfterSeconds: wait,
        },
      );
    }
    const result = await accept(trx);
    await trx.insertInto('copy_accepts').values({ workspace_id: workspaceId, accepted_at: now }).execute();
    return result;
  });
}
