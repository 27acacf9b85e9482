// The lifecycle of a send (docs/api.md, "Send"; docs/engine.md, "Sends"): every status a sends row
// takes, and every write of one. The API accepts a send (queued, or scheduled when it names a time) and
// may cancel it while no dispatcher holds it; a dispatcher claims it when due with a lease, and the
// lease holder ends it sent or failed, or queues it again after a passing failure or a crash. A claimed
// send stays `queued` (what the API shows while its mail is being delivered): its lease, not its
// status, says a dispatcher holds it, and cancel checks that lease in the same statement.

import { sql } from 'kysely';
import { sendItemOf } from '../api/send-views.js';
import type { Dialect } from '../db/database.js';
import type { SendRow } from '../db/schema.js';
import { sendRefused } from '../durable/records.js';
import type { CrashPolicy } from '../queue/backoff.js';
import { skipLocked } from '../queue/claim.js';
import { SENDS } from '../queue/leased.js';
import { claimLeased, giveUp as giveUpLeased, leaseFree, unleased } from '../queue/leases.js';
import type { Lease, Moves, Queryable } from '../queue/moves.js';
import { emit } from '../queue/outbox.js';
import { deleteFinished } from '../queue/prune.js';
import type { SendStatus } from '../states.js';

export const SEND_MOVES = {
  accept: {
    from: [],
    to: ['queued', 'scheduled'],
    by: 'the API, when it accepts the send: scheduled when it names a time',
  },
  claim: {
    from: ['scheduled', 'queued'],
    to: ['queued'],
    by: 'a dispatcher, when it is due or its lease ran out, with a lease (attempts + 1)',
  },
  sent: { from: ['queued'], to: ['sent'], by: 'the lease holder, once the mail server took the mail' },
  retryLater: {
    from: ['queued'],
    to: ['queued'],
    by: 'the lease holder, after a passing failure or a crash',
  },
  fail: {
    from: ['queued'],
    to: ['failed'],
    by: 'the lease holder, after a lasting failure, the last attempt or the last crash',
  },
  giveUp: {
    from: SENDS.held,
    to: [SENDS.expired.failed],
    by: 'any dispatcher, when the lease ran out on the last crash allowed',
  },
  cancel: { from: ['scheduled', 'queued'], to: ['canceled'], by: 'the API, while no dispatcher holds it' },
} as const satisfies Moves<SendStatus>;

/** accept: the one way a row enters the sends table; scheduled when it has a time, else queued. */
export async function accept(q: Queryable, send: Omit<SendRow, 'status'>): Promise<SendRow> {
  const [queued, scheduled] = SEND_MOVES.accept.to;
  const row: SendRow = { ...send, status: send.scheduled_at === null ? queued : scheduled };
  await q.insertInto('sends').values(row).execute();
  return row;
}

/**
 * cancel: a send whose mail has not started (no dispatcher holds it), with its webhook event, in the
 * caller's transaction; undefined
 * when it could not be canceled. The race with a claim is decided by this one conditional write.
 */
export async function cancel(
  trx: Queryable,
  workspaceId: string,
  id: string,
  now: number,
): Promise<SendRow | undefined> {
  // In the caller's transaction, with the request's audit record after it (src/domain/sends/sends.ts).
  const row = await trx
    .updateTable('sends')
    .set({ status: SEND_MOVES.cancel.to[0], updated_at: now })
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where('status', 'in', SEND_MOVES.cancel.from)
    .where('lease_owner', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (row) await emit(trx, { workspaceId, type: 'send.canceled', data: await sendItemOf(trx, row), at: now });
  return row;
}

/** claim: up to `limit` due sends (or sends whose lease ran out), oldest first, in one statement. */
export function claim(q: Queryable, dialect: Dialect, lease: Lease, limit: number): Promise<SendRow[]> {
  return claimLeased<SendRow>(q, SENDS, lease, {
    pick: sql`
      select id from sends
      where status in (${sql.join([...SEND_MOVES.claim.from])}) and run_after <= ${lease.now}
        and ${leaseFree(SENDS, lease.now)}
      order by run_after
      limit ${limit}
      ${skipLocked(dialect)}`,
    set: sql`status = ${SEND_MOVES.claim.to[0]}, updated_at = ${lease.now}`,
  });
}

/** How a held send's attempt ended. */
export type SendOutcome =
  | { kind: 'sent'; refused: string[] }
  | {
      /** again: retryLater at `runAfter`; failed: fail. */
      kind: 'again' | 'failed';
      error: string;
      refused: string[];
      runAfter?: number;
      /** The attempt crashed: the crash its claim counted stays counted. */
      crashed: boolean;
    };

/**
 * sent, retryLater or fail, checked against the lease; a send that ended is reported to webhooks
 * (docs/webhooks.md) in the same transaction. False when the lease was lost.
 */
export async function settle(
  q: Queryable,
  owner: string,
  id: string,
  outcome: SendOutcome,
  now: number,
): Promise<boolean> {
  const refused = outcome.refused.length > 0 ? sendRefused.encode(outcome.refused) : null;
  const set =
    outcome.kind === 'sent'
      ? { status: SEND_MOVES.sent.to[0], sent_at: now, error: null, refused }
      : {
          status: outcome.kind === 'failed' ? SEND_MOVES.fail.to[0] : SEND_MOVES.retryLater.to[0],
          error: outcome.error,
          refused,
          ...(outcome.runAfter === undefined ? {} : { run_after: outcome.runAfter }),
          // The attempt ended without crashing: its claim's crash is taken back.
          ...(outcome.crashed ? {} : { crashes: sql<number>`crashes - 1` }),
        };
  return q.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('sends')
      .set({ ...set, ...unleased(SENDS), updated_at: now })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('status', 'in', SEND_MOVES.sent.from)
      .returningAll()
      .executeTakeFirst();
    if (!updated) return false;
    if (updated.status === 'sent' || updated.status === 'failed') {
      await emit(trx, {
        workspaceId: updated.workspace_id,
        type: `send.${updated.status}`,
        data: await sendItemOf(trx, updated),
        at: now,
      });
    }
    return true;
  });
}

/**
 * giveUp: sends whose lease ran out on their last crash allowed (the process died or froze while
 * delivering them, or crashed and could not even record it) are failed, not claimed again; with their
 * webhook events.
 */
export async function giveUp(q: Queryable, now: number, policy: CrashPolicy): Promise<SendRow[]> {
  return giveUpLeased<SendRow>(
    q,
    {
      leased: SENDS,
      async givenUp(trx, rows) {
        for (const row of rows) {
          await emit(trx, {
            workspaceId: row.workspace_id,
            type: 'send.failed',
            data: await sendItemOf(trx, row),
            at: now,
          });
        }
      },
    },
    now,
    policy,
  );
}

/**
 * When a send is next due: its run_after, or, while a process holds its lease, when that lease ends
 * (the holder delivers it first; looking earlier would find nothing to claim, again and again).
 */
export async function nextDue(q: Queryable): Promise<number | undefined> {
  const result = await sql<{ next_due: number | string | null }>`
    select min(case when lease_owner is not null and lease_expires_at > run_after
                    then lease_expires_at else run_after end) as next_due
    from sends where status in (${sql.join([...SEND_MOVES.claim.from])})`.execute(q);
  const next = result.rows[0]?.next_due;
  return next === null || next === undefined ? undefined : Number(next);
}

// Retention (docs/api.md, "Retention"): pruning removes a finished row; it moves no row between states,
// so it is not in SEND_MOVES (docs/engine.md, "Pruning is not a move").

/** The states a send ends in. */
export const FINISHED: readonly SendStatus[] = ['sent', 'failed', 'canceled'];

/** Sends that ended (their last change) before `cutoff`. */
export function prune(q: Queryable, cutoff: number, limit: number): Promise<number> {
  return deleteFinished(q, { table: 'sends', finished: FINISHED, endedAt: 'updated_at' }, cutoff, limit);
}
