// The health of a location (docs/api.md, "Location health"; docs/engine.md, "Location health"): its
// status, why, its refresh counters, the refresh requested of it and the refresh lease, and every write
// of them. The API creates a location active, makes it active again with a new secret (which takes the
// refresh lease away from a refresh of the old secret), and requests refreshes; a store marks it failed
// when a provider rejects its credentials for good; the holder of the refresh lease (the refresher, or
// a store's own refresh: src/domain/refresher/refresh.ts decides) writes what a refresh came to. Every
// move that changes the status reports it to webhooks (location.status_changed) in its transaction.
import { sql } from 'kysely';
import { locationData } from '../api/events.js';
import type { Dialect } from '../db/database.js';
import type { LocationRow, LocationsTable } from '../db/schema.js';
import { OAUTH_PROVIDERS } from '../providers.js';
import { skipLocked } from '../queue/claim.js';
import { LOCATION_REFRESH } from '../queue/leased.js';
import { claimLeased, leaseFree, releaseLease, unleased } from '../queue/leases.js';
import { type Lease, type Moves, type Queryable, rowsChanged } from '../queue/moves.js';
import { emit } from '../queue/outbox.js';
import type { LocationStatus } from '../states.js';

export const LOCATION_MOVES = {
  create: { from: [], to: ['active'], by: 'the API, with its secret' },
  replaceSecret: {
    from: ['active', 'failed', 'needs_attention'],
    to: ['active'],
    by: 'the API, with a new secret: failures forgotten, the refresh lease taken away',
  },
  refreshed: {
    from: ['active', 'needs_attention'],
    to: ['active'],
    by: 'the refresh lease holder, with new tokens',
  },
  backOff: {
    from: ['active'],
    to: ['active'],
    by: 'the refresh lease holder, after a passing failure (counted, tried again later)',
  },
  needsAttention: {
    from: ['active', 'needs_attention'],
    to: ['needs_attention'],
    by: 'the refresh lease holder, when a person must act or passing failures reached the most in a row',
  },
  grantGone: {
    from: ['active', 'needs_attention'],
    to: ['failed'],
    by: 'the refresh lease holder, when the provider says the grant is gone',
  },
  markFailed: {
    from: ['active', 'failed', 'needs_attention'],
    to: ['failed'],
    by: 'a store, when the provider rejects the credentials for good (409)',
  },
} as const satisfies Moves<LocationStatus>;

type Health = Pick<
  LocationsTable,
  | 'status'
  | 'validation_error'
  | 'failure_reason'
  | 'last_refresh_error'
  | 'last_refresh_attempt_at'
  | 'refresh_lease_owner'
  | 'refresh_lease_expires_at'
> & { refresh_requested: number; consecutive_refresh_failures: number; refresh_after: number };

/** create: the health of a new location, for its insert. */
export function newHealth(): Health {
  return {
    status: LOCATION_MOVES.create.to[0],
    validation_error: null,
    refresh_requested: 0,
    consecutive_refresh_failures: 0,
    last_refresh_attempt_at: null,
    failure_reason: null,
    last_refresh_error: null,
    ...unleased(LOCATION_REFRESH),
    refresh_after: 0,
  };
}

/** The location.status_changed webhook event (docs/webhooks.md), in the caller's transaction. */
async function statusChanged(
  q: Queryable,
  before: Pick<LocationRow, 'id' | 'workspace_id' | 'label' | 'provider' | 'status'>,
  to: LocationStatus,
  reason: string | null,
  now: number,
): Promise<void> {
  await emit(q, {
    workspaceId: before.workspace_id,
    type: 'location.status_changed',
    data: locationData(before, before.status, to, reason),
    at: now,
  });
}

/**
 * replaceSecret: a new secret (and metadata) makes the location active with its failures forgotten,
 * and takes the refresh lease away from whoever holds it: a refresh of the old secret still under way
 * then cannot write over the new one. The health columns written, for the caller's answer.
 */
export async function replaceSecret(
  q: Queryable,
  id: string,
  secret: Pick<LocationsTable, 'secret_envelope' | 'metadata' | 'access_token_expires_at'>,
  now: number,
) {
  const update = {
    ...secret,
    status: LOCATION_MOVES.replaceSecret.to[0],
    validation_error: null,
    failure_reason: null,
    last_refresh_error: null,
    consecutive_refresh_failures: 0,
    refresh_requested: 0,
    refresh_after: 0,
    ...unleased(LOCATION_REFRESH),
    updated_at: now,
  };
  await q
    .updateTable('locations')
    .set((eb) => ({ ...update, secret_version: eb('secret_version', '+', 1) }))
    .where('id', '=', id)
    .where('status', 'in', LOCATION_MOVES.replaceSecret.from)
    .execute();
  return update;
}

/** A refresh for the refresher to make (docs/api.md, "Location health"); the status does not change. */
export async function requestRefresh(q: Queryable, id: string): Promise<void> {
  await q.updateTable('locations').set({ refresh_requested: 1 }).where('id', '=', id).execute();
}

/**
 * markFailed: a provider rejected the credentials for good (docs/api.md, "Errors", 409): failed with
 * the provider's reason until the secret is replaced, reported when it was not failed already.
 */
export async function markFailed(q: Queryable, id: string, reason: string, now: number): Promise<void> {
  await q.transaction().execute(async (trx) => {
    const before = await trx
      .selectFrom('locations')
      .select(['id', 'workspace_id', 'label', 'provider', 'status'])
      .where('id', '=', id)
      .executeTakeFirst();
    const to = LOCATION_MOVES.markFailed.to[0];
    await trx
      .updateTable('locations')
      .set({ status: to, validation_error: reason, failure_reason: reason, updated_at: now })
      .where('id', '=', id)
      .where('status', 'in', LOCATION_MOVES.markFailed.from)
      .execute();
    if (before && before.status !== to) await statusChanged(trx, before, to, reason, now);
  });
}

// ---- the refresh lease: one refresh of a location at a time, across every process

/**
 * Takes the refresh lease of an OAuth location (src/queue/leases.ts, claimLeased): its row, or
 * undefined when another process holds it.
 */
export async function takeLease(
  q: Queryable,
  dialect: Dialect,
  id: string,
  lease: Lease,
): Promise<LocationRow | undefined> {
  const [row] = await claimLeased<LocationRow>(q, LOCATION_REFRESH, lease, {
    pick: sql`select id from locations
      where id = ${id}
        and provider in (${sql.join([...OAUTH_PROVIDERS])})
        and ${leaseFree(LOCATION_REFRESH, lease.now)}
      ${skipLocked(dialect)}`,
  });
  return row;
}

/** A write that counts only while `owner` still holds the lease. */
function held(q: Queryable, owner: string, id: string) {
  return q.updateTable('locations').where('id', '=', id).where('refresh_lease_owner', '=', owner);
}

/** Frees the lease, nothing else written (nothing was due, or the refresh could not run). */
export async function release(q: Queryable, owner: string, id: string): Promise<void> {
  await releaseLease(q, LOCATION_REFRESH, owner, { id });
}

/**
 * A failed location is not refreshed: its grant is gone. A request for it is answered (with
 * `message`), not kept; the lease is freed.
 */
export async function refuseFailed(q: Queryable, owner: string, row: LocationRow, message: string) {
  await held(q, owner, row.id)
    .set({
      ...(row.refresh_requested === 1 ? { refresh_requested: 0, last_refresh_error: message } : {}),
      ...unleased(LOCATION_REFRESH),
    })
    .execute();
}

// The refresh lease holder's writes are checked against the lease, not the status: new tokens are
// written even if a store marked the location failed meanwhile (a single-use refresh token is spent).

/**
 * refreshed: the new tokens, and the location active, checked against the lease; a location back to
 * active reports it in the transaction of the write. False when the secret was replaced (which takes
 * the lease) or the location deleted meanwhile.
 */
export async function refreshed(
  q: Queryable,
  owner: string,
  row: LocationRow,
  tokens: Pick<LocationsTable, 'secret_envelope' | 'access_token_expires_at'>,
  now: number,
): Promise<boolean> {
  const to = LOCATION_MOVES.refreshed.to[0];
  const write = async (trx: Queryable) =>
    rowsChanged(
      await held(trx, owner, row.id)
        .set({
          ...tokens,
          status: to,
          validation_error: null,
          failure_reason: null,
          last_refresh_error: null,
          consecutive_refresh_failures: 0,
          last_refresh_attempt_at: now,
          refresh_requested: 0,
          refresh_after: 0,
          ...unleased(LOCATION_REFRESH),
        })
        .executeTakeFirst(),
    ) > 0;
  if (row.status === to) return write(q);
  return q.transaction().execute(async (trx) => {
    const written = await write(trx);
    if (written) await statusChanged(trx, row, to, null, now);
    return written;
  });
}

/** What a failed refresh came to, as refresh.ts classed it. */
export interface RefreshFailed {
  /** backOff (active only: a location that needs attention stays so by needsAttention), or the others. */
  move: 'backOff' | 'needsAttention' | 'grantGone';
  reason: string | null;
  error: string;
  failures: number;
  /** When the refresher tries again (0: at its next look). */
  refreshAfter: number;
}

/** Writes a failed refresh, every field at once, checked against the lease; reports a changed status. */
export async function refreshFailed(
  q: Queryable,
  owner: string,
  row: LocationRow,
  failed: RefreshFailed,
  now: number,
): Promise<void> {
  const status = LOCATION_MOVES[failed.move].to[0];
  await q.transaction().execute(async (trx) => {
    const result = await held(trx, owner, row.id)
      .set({
        status,
        failure_reason: status === 'active' ? null : failed.reason,
        validation_error: status === 'active' ? row.validation_error : failed.reason,
        last_refresh_error: failed.error,
        consecutive_refresh_failures: failed.failures,
        last_refresh_attempt_at: now,
        refresh_requested: 0,
        refresh_after: failed.refreshAfter,
        ...unleased(LOCATION_REFRESH),
      })
      .executeTakeFirst();
    if (status !== row.status && rowsChanged(result) > 0)
      await statusChanged(trx, row, status, failed.reason, now);
  });
}
