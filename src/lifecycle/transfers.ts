// The lifecycle of a single transfer (copy, move, remove, pull): every status a transfers row takes,
// and every write of one. A transfer is queued when accepted, claimed (running, with a lease), and
// ends complete or failed, or is queued again after a passing failure. A transfer that runs again
// after a crash starts over (each kind is written so that a second run finishes what the first began).
// Work that keeps crashing (an exception outside the classified failures, or a process that dies or
// freezes holding the lease) is failed after FERRY_WORK_MAX_CRASHES claims that ended so: each claim
// counts a crash in `crashes`, which the claim's settlement or hand-back takes back.
// A transfer over several objects (a pattern, several sources or URLs) is never claimed: it owns a
// job (src/lifecycle/jobs.ts) whose objects carry each one's work, so it is run object by
// object by the job engine; its job's planner starts it, and whoever finishes its job ends it.

import { sql } from 'kysely';
import { transferView } from '../api/views.js';
import type { Dialect } from '../db/database.js';
import type { JobRow, TransferRow } from '../db/schema.js';
import type { Given as DisplayGiven } from '../display.js';
import { transferGivenFrom, transferGivenTo } from '../durable/records.js';
import { transferSpec } from '../durable/work.js';
import { newId } from '../ids.js';
import type { CrashPolicy } from '../queue/backoff.js';
import { skipLocked } from '../queue/claim.js';
import { TRANSFERS } from '../queue/leased.js';
import { claimLeased, unleased } from '../queue/leases.js';
import { type Lease, leaseMoves, type Moves, NEVER, type Queryable, rowsChanged } from '../queue/moves.js';
import { emit } from '../queue/outbox.js';
import { deleteFinished } from '../queue/prune.js';
import { TRANSFER_FINISHED, type TransferStatus } from '../states.js';
import { afterCrash, provenAs, type Settlement } from './outcome.js';
import { locationIds, specLocations, type TransferSpec } from './specs.js';

export const TRANSFER_MOVES = {
  enqueue: { from: [], to: ['queued'], by: 'the API, when it accepts the request' },
  claim: { from: ['queued'], to: ['running'], by: 'a worker, with a lease (attempts + 1)' },
  complete: { from: ['running'], to: ['complete'], by: 'the lease holder' },
  ...leaseMoves(TRANSFERS),
  jobStarted: { from: ['queued'], to: ['running'], by: 'the planner of its job (several objects)' },
  jobEnded: {
    from: ['queued', 'running'],
    to: ['complete', 'failed'],
    by: 'whoever ends its job: failed when any object failed',
  },
  retry: { from: ['failed'], to: ['queued'], by: 'the API, with its job (its failed objects run again)' },
} as const satisfies Moves<TransferStatus>;

export interface Queued {
  id: string;
  status: 'queued';
}

/** What the caller asked for, as given (docs/api.md, "Polling"): `to` is absent for a remove. */
export interface Given {
  from: unknown;
  to?: unknown;
}

/** enqueue: the one way a row enters the transfers table. */
export async function enqueue(
  q: Queryable,
  workspaceId: string,
  spec: TransferSpec,
  now: number,
  given?: Given,
  /** Run by a job over its objects (the caller creates the job): never claimed as a whole. */
  byJob = false,
  /** The transfer's cap in bytes per second (docs/api.md, "Bandwidth"). */
  bandwidthLimit?: number,
  /** Its id when the caller needs it before (a backup prefix names it: docs/api.md, "Undo"). */
  id: string = newId(),
): Promise<Queued> {
  const status = TRANSFER_MOVES.enqueue.to[0];
  await q
    .insertInto('transfers')
    .values({
      id,
      workspace_id: workspaceId,
      kind: spec.kind,
      status,
      spec: transferSpec.encode(spec),
      location_ids: locationIds(specLocations(spec)),
      given_from: given === undefined ? null : transferGivenFrom.encode(given.from as DisplayGiven),
      given_to: given?.to === undefined ? null : transferGivenTo.encode(given.to as DisplayGiven),
      bytes_total: null,
      error: null,
      ...unleased(TRANSFERS),
      ...(byJob ? { run_after: NEVER } : {}),
      ...(bandwidthLimit === undefined ? {} : { bandwidth_limit: bandwidthLimit }),
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
    })
    .execute();
  return { id, status };
}

/** claim: up to `limit` due transfers of one workspace, oldest first, in one statement (see objects.claim). */
export async function claim(
  q: Queryable,
  dialect: Dialect,
  lease: Lease,
  workspaceId: string,
  limit: number,
): Promise<TransferRow[]> {
  if (limit <= 0) return [];
  return claimLeased<TransferRow>(q, TRANSFERS, lease, {
    pick: sql`
      select id from transfers
      where workspace_id = ${workspaceId} and status = ${TRANSFER_MOVES.claim.from[0]}
        and run_after <= ${lease.now}
      order by run_after, created_at
      limit ${limit}
      ${skipLocked(dialect)}`,
    set: sql`status = ${TRANSFER_MOVES.claim.to[0]}, started_at = coalesce(started_at, ${lease.now}), updated_at = ${lease.now}`,
  });
}

function held(q: Queryable, owner: string, id: string) {
  return q
    .updateTable('transfers')
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('status', '=', 'running');
}

export async function progress(
  q: Queryable,
  owner: string,
  id: string,
  bytes: number,
  now: number,
): Promise<void> {
  await held(q, owner, id).set({ bytes_done: bytes, updated_at: now }).execute();
}

/** jobStarted: the planner of the transfer's job began (again). */
export async function jobStarted(q: Queryable, id: string, now: number): Promise<void> {
  await q
    .updateTable('transfers')
    .set({
      status: TRANSFER_MOVES.jobStarted.to[0],
      started_at: sql<number>`coalesce(started_at, ${now})`,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('status', 'in', TRANSFER_MOVES.jobStarted.from)
    .execute();
}

/** What a transfer's job ended with: its counters, and its error when planning failed. */
export interface JobEnd {
  failed: number;
  total: number;
  bytes: number;
  /** Set when the job failed as a whole (its planning). */
  error: string | null;
  /** The job's row as it ended: its counts go into the webhook event, as GET shows them. */
  job: JobRow;
}

/**
 * jobEnded: in the transaction that ends the transfer's job, the transfer ends too: complete when no
 * object failed, else failed saying how many of how many (docs/api.md, "Polling"), with its webhook
 * event (docs/webhooks.md).
 */
export async function jobEnded(q: Queryable, id: string, end: JobEnd, now: number): Promise<void> {
  const [complete, failed] = TRANSFER_MOVES.jobEnded.to;
  const error =
    end.error ??
    (end.failed > 0 ? `${end.failed} of ${end.total} object${end.total === 1 ? '' : 's'} failed` : null);
  const row = await q
    .updateTable('transfers')
    .set({
      status: error === null ? complete : failed,
      error,
      bytes_done: end.bytes,
      bytes_total: end.bytes,
      started_at: sql<number>`coalesce(started_at, ${now})`,
      finished_at: now,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('status', 'in', TRANSFER_MOVES.jobEnded.from)
    .returningAll()
    .executeTakeFirst();
  if (row) {
    const type = row.status === 'complete' ? 'transfer.complete' : 'transfer.failed';
    const data = transferView(row, { row: end.job, runningBytes: 0 });
    await emit(q, { workspaceId: row.workspace_id, type, data, at: now });
  }
}

/** retry: a failed transfer over several objects is queued again, for its job to run; false otherwise. */
export async function retry(q: Queryable, id: string, now: number): Promise<boolean> {
  return (
    rowsChanged(
      await q
        .updateTable('transfers')
        .set({ status: TRANSFER_MOVES.retry.to[0], error: null, finished_at: null, updated_at: now })
        .where('id', '=', id)
        .where('status', 'in', TRANSFER_MOVES.retry.from)
        .executeTakeFirst(),
    ) > 0
  );
}

/** The size of what the transfer moves, once known and before its bytes start (docs/api.md, "Polling"). */
export async function sized(
  q: Queryable,
  owner: string,
  id: string,
  total: number,
  now: number,
): Promise<void> {
  await held(q, owner, id).set({ bytes_total: total, updated_at: now }).execute();
}

/** complete, retryLater or fail, as the attempt's settlement says; false when the lease was lost. */
export async function settle(
  q: Queryable,
  owner: string,
  id: string,
  settlement: Settlement,
  now: number,
): Promise<boolean> {
  const released = { ...unleased(TRANSFERS), updated_at: now };
  const set = (() => {
    switch (settlement.kind) {
      case 'done':
        return {
          status: TRANSFER_MOVES.complete.to[0],
          bytes_done: settlement.bytes,
          bytes_total: settlement.bytesTotal ?? null,
          // How its written bytes were proven (docs/api.md, "Verification"); null when it wrote none.
          verified: settlement.verified === undefined ? null : provenAs(settlement.verified),
          error: null,
          finished_at: now,
        };
      case 'again':
        return {
          status: TRANSFER_MOVES.retryLater.to[0],
          error: settlement.error,
          run_after: settlement.runAfter,
          // The attempt ended without crashing: its claim's crash is taken back.
          ...(settlement.crashed ? {} : { crashes: sql<number>`crashes - 1` }),
        };
      case 'failed':
        return { status: TRANSFER_MOVES.fail.to[0], error: settlement.error, finished_at: now };
    }
  })();
  // The end and its webhook event (docs/webhooks.md) in one transaction: neither without the other.
  return q.transaction().execute(async (trx) => {
    const row = await held(trx, owner, id)
      .set({ ...set, ...released })
      .returningAll()
      .executeTakeFirst();
    if (!row) return false;
    if (row.status === 'complete' || row.status === 'failed') {
      await emit(trx, {
        workspaceId: row.workspace_id,
        type: `transfer.${row.status}`,
        data: transferView(row),
        at: now,
      });
    }
    return true;
  });
}

/**
 * The worker crashed on a transfer it holds (outside the attempt, or while settling it): queued again
 * after a backoff with the crash kept, or failed on the last crash allowed (retryLater or fail). False
 * when the lease was lost meanwhile.
 */
export async function crashed(
  q: Queryable,
  owner: string,
  id: string,
  message: string,
  policy: CrashPolicy,
  clock: { now(): number },
): Promise<boolean> {
  const row = await q
    .selectFrom('transfers')
    .select('crashes')
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('status', '=', 'running')
    .executeTakeFirst();
  if (!row) return false;
  const settlement = afterCrash(message, { count: row.crashes, policy }, clock);
  return settle(q, owner, id, settlement, clock.now());
}

/**
 * giveUp, for housekeeping (src/queue/leases.ts, takeBack): transfers whose lease ran out on the last
 * crash allowed (every claim of them but the ones that settled crashed, or its process died or froze)
 * were failed rather than reclaimed, so that work that kills or freezes every process that takes it is
 * not taken again; as every end of a transfer, each with its webhook event (docs/webhooks.md), in the
 * same transaction.
 */
export async function givenUp(trx: Queryable, given: TransferRow[], now: number): Promise<void> {
  for (const row of given) {
    await emit(trx, {
      workspaceId: row.workspace_id,
      type: 'transfer.failed',
      data: transferView(row),
      at: now,
    });
  }
}

/** Transfers running now, per workspace (for fair share); the claim index finds them alone. */
export async function runningByWorkspace(q: Queryable): Promise<Map<string, number>> {
  const rows = await q
    .selectFrom('transfers')
    .select(['workspace_id', sql<number>`count(*)`.as('n')])
    .where('status', '=', 'running')
    // A transfer run by its job holds no lease: its objects are counted as the job's.
    .where('lease_owner', 'is not', null)
    .groupBy('workspace_id')
    .execute();
  return new Map(rows.map((r) => [r.workspace_id, Number(r.n)]));
}

/** When the next queued transfer waiting out a backoff is due; undefined: none. */
export async function nextDue(q: Queryable, now: number): Promise<number | undefined> {
  const row = await q
    .selectFrom('transfers')
    .select((eb) => eb.fn.min('run_after').as('next'))
    .where('status', '=', 'queued')
    .where('run_after', '>', now)
    // Transfers run by their jobs are never due.
    .where('run_after', '<', NEVER)
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
}

/** Workspaces with transfers due now, and how many. */
export async function dueByWorkspace(q: Queryable, now: number): Promise<Map<string, number>> {
  const rows = await q
    .selectFrom('transfers')
    .select(['workspace_id', sql<number>`count(*)`.as('n')])
    .where('status', '=', 'queued')
    .where('run_after', '<=', now)
    .groupBy('workspace_id')
    .execute();
  return new Map(rows.map((r) => [r.workspace_id, Number(r.n)]));
}

/**
 * prune: up to `limit` transfers that finished before `cutoff` leave the table (docs/api.md,
 * "Retention"); call it again until it answers 0. A transfer that runs a job goes only once its job
 * is gone (jobs.prune, called first), so no job is left pointing at a missing transfer. The states are
 * checked again by the DELETE itself, so a transfer retried since it was picked stays.
 */
export async function prune(q: Queryable, cutoff: number, limit: number): Promise<number> {
  return deleteFinished(
    q,
    { table: 'transfers', finished: TRANSFER_FINISHED, endedAt: 'finished_at' },
    cutoff,
    limit,
    sql`not exists (select 1 from jobs where jobs.transfer_id = transfers.id)`,
  );
}
