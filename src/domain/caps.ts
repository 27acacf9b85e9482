// Caps per workspace (docs/api.md, "Rate limits and caps"): the most locations, API keys (not
// revoked), webhooks and open share links one workspace may hold. A creation counts and inserts in one
// transaction that first writes the workspace's row, so creations in one workspace wait for each other
// and two at once cannot both take the last place (a row lock on PostgreSQL; SQLite writes one
// transaction at a time anyway). Past the cap: 409 naming it.
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { conflict } from '../errors.js';

export type CappedTable = 'locations' | 'api_keys' | 'webhooks' | 'shares' | 'schedules';

/** How each capped resource is named in the refusal, and how a caller makes room. */
const WHAT: Record<CappedTable, { noun: string; room: string; setting: string }> = {
  locations: { noun: 'locations', room: 'delete one (DELETE /v1/locations)', setting: 'FERRY_MAX_LOCATIONS' },
  api_keys: { noun: 'API keys', room: 'revoke one (DELETE /v1/tokens/{id})', setting: 'FERRY_MAX_KEYS' },
  webhooks: {
    noun: 'webhooks',
    room: 'delete one (DELETE /v1/webhooks/{id})',
    setting: 'FERRY_MAX_WEBHOOKS',
  },
  schedules: {
    noun: 'schedules',
    room: 'delete one (DELETE /v1/schedules/{id})',
    setting: 'FERRY_MAX_SCHEDULES',
  },
  shares: {
    noun: 'open share links',
    room: 'revoke one (DELETE /v1/shares/{id})',
    setting: 'FERRY_MAX_OPEN_SHARES',
  },
};

/** The rows of `table` that count against the cap: every location and webhook, keys not revoked, open links. */
export async function countHeld(
  db: Kysely<Database>,
  table: CappedTable,
  workspaceId: string,
  now: number,
): Promise<number> {
  let query = db
    .selectFrom(table)
    .select(sql<number>`count(*)`.as('n'))
    .where('workspace_id', '=', workspaceId);
  if (table === 'api_keys') query = query.where(sql<boolean>`revoked_at is null`);
  if (table === 'shares') {
    query = query.where(
      sql<boolean>`revoked_at is null and (expires_at is null or expires_at > ${now})
                   and (max_downloads is null or downloads < max_downloads)`,
    );
  }
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The 409 for a workspace that holds `cap` of `table` already. */
export function capReached(table: CappedTable, cap: number) {
  const what = WHAT[table];
  return conflict(`a workspace may have at most ${cap} ${what.noun} (${what.setting}); ${what.room} first`);
}

/**
 * Within `trx`: locks the workspace's row, then refuses with 409 when the workspace holds `cap` of
 * `table` already. The caller inserts in the same transaction.
 */
export async function checkCap(
  trx: Transaction<Database>,
  table: CappedTable,
  workspaceId: string,
  cap: number,
  now: number,
): Promise<void> {
  await trx
    .updateTable('workspaces')
    .set((eb) => ({ name: eb.ref('name') }))
    .where('id', '=', workspaceId)
    .execute();
  if ((await countHeld(trx, table, workspaceId, now)) >= cap) throw capReached(table, cap);
}
