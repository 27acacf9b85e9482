// The lifecycles of webhook endpoints and their messages (docs/webhooks.md; docs/engine.md, "Webhook
// endpoints" and "Webhook messages"): every status a webhooks or webhook_messages row takes, and every
// write of those tables and of the attempts log. An endpoint is created enabled; the API disables and
// enables it, and the deliverer disables it when every attempt failed for a day. A message is queued
// pending by emit (outbox.ts) in the transaction of the move it reports, claimed with a lease by a
// deliverer, and ends delivered or failed, or waits pending for its next attempt. A claimed message
// stays `pending`: its lease says a deliverer holds it.
import { type RawBuilder, sql } from 'kysely';
import type { Dialect } from '../db/database.js';
import type { WebhookMessageRow, WebhookRow } from '../db/schema.js';
import { newId } from '../ids.js';
import { skipLocked } from '../queue/claim.js';
import { WEBHOOK_MESSAGES } from '../queue/leased.js';
import { claimLeased, handBackLeases, leaseFree, unleased } from '../queue/leases.js';
import { type Lease, type Moves, type Queryable, rowsChanged } from '../queue/moves.js';
import type { WebhookMessageStatus, WebhookStatus } from '../states.js';

export const WEBHOOK_MOVES = {
  create: { from: [], to: ['enabled'], by: 'the API, with a new signing secret' },
  disable: { from: ['enabled'], to: ['disabled'], by: 'the API' },
  enable: {
    from: ['disabled'],
    to: ['enabled'],
    by: 'the API: its reason and failure streak are cleared',
  },
  autoDisable: {
    from: ['enabled'],
    to: ['disabled'],
    by: 'the deliverer, when every attempt failed for a day',
  },
} as const satisfies Moves<WebhookStatus>;

export const WEBHOOK_MESSAGE_MOVES = {
  queue: {
    from: [],
    to: ['pending'],
    by: 'emit (outbox.ts), one per subscribed enabled endpoint, in the transaction of the move it reports',
  },
  claim: {
    from: ['pending'],
    to: ['pending'],
    by: 'a deliverer, when due and its endpoint enabled, with a lease (attempts + 1; a lease that ran out counts a crash)',
  },
  deliver: { from: ['pending'], to: ['delivered'], by: 'the lease holder, on a 2xx answer' },
  retryLater: {
    from: ['pending'],
    to: ['pending'],
    by: 'the lease holder, after a failed or crashed attempt, on the schedule',
  },
  fail: {
    from: ['pending'],
    to: ['failed'],
    by: 'the lease holder, after the last attempt of the day or the last crash allowed',
  },
  handBack: {
    from: ['pending'],
    to: ['pending'],
    by: 'a deliverer without a slot for it, or a stopping one (the attempt is not counted)',
  },
  giveUp: {
    from: ['pending'],
    to: ['failed'],
    by: 'the lease holder of a message whose attempts crashed the most times allowed, without an attempt',
  },
} as const satisfies Moves<WebhookMessageStatus>;

// ---- endpoints

/** create: the one way a row enters the webhooks table. */
export function create(
  q: Queryable,
  endpoint: Pick<WebhookRow, 'id' | 'workspace_id' | 'url' | 'events' | 'secret_envelope'>,
  now: number,
): Promise<WebhookRow> {
  return q
    .insertInto('webhooks')
    .values({
      ...endpoint,
      status: WEBHOOK_MOVES.create.to[0],
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The API's change of an endpoint: its URL or events, and enable or disable when `status` differs from
 * the row's (enable clears the reason and the failure streak, so it gets a new day). Undefined when the
 * endpoint is gone.
 */
export function change(
  q: Queryable,
  row: WebhookRow,
  edit: { url?: string; events?: string; status?: WebhookStatus },
  now: number,
): Promise<WebhookRow | undefined> {
  const move =
    edit.status === undefined || edit.status === row.status
      ? undefined
      : edit.status === WEBHOOK_MOVES.enable.to[0]
        ? WEBHOOK_MOVES.enable
        : WEBHOOK_MOVES.disable;
  const status =
    move === undefined
      ? {}
      : move === WEBHOOK_MOVES.enable
        ? { status: move.to[0], disabled_reason: null, disabled_at: null, failing_since: null }
        : { status: move.to[0], disabled_reason: 'disabled through the API', disabled_at: now };
  return q
    .updateTable('webhooks')
    .set({
      ...(edit.url === undefined ? {} : { url: edit.url }),
      ...(edit.events === undefined ? {} : { events: edit.events }),
      ...status,
      updated_at: now,
    })
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the endpoint, its queued messages and its log, in the caller's transaction. */
export async function remove(trx: Queryable, id: string): Promise<void> {
  await trx.deleteFrom('webhook_attempts').where('webhook_id', '=', id).execute();
  await trx.deleteFrom('webhook_messages').where('webhook_id', '=', id).execute();
  await trx.deleteFrom('webhooks').where('id', '=', id).execute();
}

// ---- messages

/** The messages of endpoints whose slots are all taken in this process are left out of a claim. */
function notOf(full: readonly string[]): RawBuilder<unknown> {
  return full.length === 0 ? sql`` : sql`and m.webhook_id not in (${sql.join([...full])})`;
}

/**
 * claim: up to `room` due messages of enabled endpoints, at most `perEndpoint` of one endpoint, none of
 * the endpoints in `full`. A message whose lease ran out was being attempted by a process that died (or
 * stalled past the lease): that attempt counts as crashed.
 */
export function claim(
  q: Queryable,
  dialect: Dialect,
  lease: Lease,
  limits: { room: number; perEndpoint: number; full: readonly string[] },
): Promise<WebhookMessageRow[]> {
  const { room, perEndpoint, full } = limits;
  return claimLeased<WebhookMessageRow>(q, WEBHOOK_MESSAGES, lease, {
    set: sql`updated_at = ${lease.now}`,
    pick: sql`
      select r.webhook_id, r.event_id from (
        select c.webhook_id, c.event_id, c.run_after,
               row_number() over (partition by c.webhook_id order by c.run_after, c.event_id) as n
        from (
          select m.webhook_id, m.event_id, m.run_after from webhook_messages m
          join webhooks w on w.id = m.webhook_id
          where m.status = ${WEBHOOK_MESSAGE_MOVES.claim.from[0]} and m.run_after <= ${lease.now}
            and w.status = ${WEBHOOK_MOVES.create.to[0]}
            and ${leaseFree(WEBHOOK_MESSAGES, lease.now, 'm')}
            ${notOf(full)}
          order by m.run_after
          limit ${room * perEndpoint}
          ${skipLocked(dialect, 'm')}
        ) c
      ) r
      where r.n <= ${perEndpoint}
      order by r.run_after
      limit ${room}`,
  });
}

/**
 * When the next claim can find something: messages of disabled endpoints and of the endpoints in
 * `full` wait for no one, and one that another process holds is due when its lease ends.
 */
export async function nextDue(
  q: Queryable,
  now: number,
  full: readonly string[],
): Promise<number | undefined> {
  const result = await sql<{ next: number | string | null }>`
    select min(case when m.lease_expires_at >= ${now} and m.lease_expires_at > m.run_after
                    then m.lease_expires_at else m.run_after end) as next
    from webhook_messages m join webhooks w on w.id = m.webhook_id
    where m.status = ${WEBHOOK_MESSAGE_MOVES.claim.from[0]} and w.status = ${WEBHOOK_MOVES.create.to[0]}
      ${notOf(full)}`.execute(q);
  const next = result.rows[0]?.next;
  return next === null || next === undefined ? undefined : Number(next);
}

/** The message, while `owner` holds it. */
function held(q: Queryable, owner: string, message: WebhookMessageRow) {
  return q
    .updateTable('webhook_messages')
    .where('webhook_id', '=', message.webhook_id)
    .where('event_id', '=', message.event_id)
    .where('lease_owner', '=', owner)
    .where('status', 'in', WEBHOOK_MESSAGE_MOVES.handBack.from);
}

/** handBack: back to the queue at once, its claim's attempt not counted. */
export async function handBack(q: Queryable, owner: string, message: WebhookMessageRow): Promise<void> {
  await handBackLeases(q, WEBHOOK_MESSAGES, owner, undefined, {
    webhook_id: message.webhook_id,
    event_id: message.event_id,
  });
}

/** What one attempt was, for the deliveries log (GET /v1/webhooks/{id}/deliveries). */
export interface Attempt {
  statusCode?: number | undefined;
  error?: string | undefined;
  durationMs: number;
}

/** How the message goes on after an attempt. */
export type MessageEnd =
  /** deliver */
  | { kind: 'delivered' }
  /** retryLater at `runAfter` */
  | { kind: 'again'; runAfter: number }
  /** fail, or giveUp when no attempt was made */
  | { kind: 'failed'; attempted: boolean };

/** What the attempt means for its endpoint's failure streak. */
export type Streak =
  /** Delivered: no streak. */
  | { kind: 'delivered' }
  /** Failed: the streak starts now unless it has already. */
  | { kind: 'failing' }
  /** autoDisable: failed for a day. */
  | { kind: 'disable'; reason: string };

/**
 * Writes an attempt's outcome in one transaction checked against the lease: the message's move, the
 * attempts log, and the endpoint's streak (none for a crash). False when another process took the
 * message over (the lease ran out): its record stands.
 */
export async function settle(
  q: Queryable,
  owner: string,
  message: WebhookMessageRow,
  outcome: { end: MessageEnd; attempt: Attempt; crashes?: number; streak?: Streak },
  now: number,
): Promise<boolean> {
  const { end, attempt, crashes, streak } = outcome;
  const status =
    end.kind === 'delivered'
      ? WEBHOOK_MESSAGE_MOVES.deliver.to[0]
      : end.kind === 'again'
        ? WEBHOOK_MESSAGE_MOVES.retryLater.to[0]
        : end.attempted
          ? WEBHOOK_MESSAGE_MOVES.fail.to[0]
          : WEBHOOK_MESSAGE_MOVES.giveUp.to[0];
  return q.transaction().execute(async (trx) => {
    const updated = await held(trx, owner, message)
      .set({
        status,
        ...(end.kind === 'again' ? { run_after: end.runAfter } : {}),
        ...(crashes === undefined ? {} : { crashes }),
        ...unleased(WEBHOOK_MESSAGES),
        updated_at: now,
      })
      .executeTakeFirst();
    if (rowsChanged(updated) === 0) return false;
    await trx
      .insertInto('webhook_attempts')
      .values({
        id: newId(),
        webhook_id: message.webhook_id,
        event_id: message.event_id,
        type: message.type,
        attempt: message.attempts,
        status_code: attempt.statusCode ?? null,
        error: attempt.error ?? null,
        duration_ms: attempt.durationMs,
        created_at: now,
      })
      .execute();
    if (streak !== undefined) await endpointStreak(trx, message.webhook_id, streak, now);
    return true;
  });
}

/** The endpoint's failure streak after an attempt; autoDisable once it has lasted a day. */
async function endpointStreak(q: Queryable, id: string, streak: Streak, now: number): Promise<void> {
  const endpoint = q.updateTable('webhooks').where('id', '=', id);
  switch (streak.kind) {
    case 'delivered':
      await endpoint.set({ failing_since: null }).where('failing_since', 'is not', null).execute();
      return;
    case 'failing':
      await endpoint.set({ failing_since: now }).where('failing_since', 'is', null).execute();
      return;
    case 'disable':
      await endpoint
        .set({
          status: WEBHOOK_MOVES.autoDisable.to[0],
          disabled_at: now,
          disabled_reason: streak.reason,
          updated_at: now,
        })
        .where('status', 'in', WEBHOOK_MOVES.autoDisable.from)
        .execute();
      return;
  }
}

// Retention (docs/api.md, "Retention"): pruning removes finished messages and their attempts; it moves
// no row between states, so it is not in the tables of moves (docs/engine.md, "Pruning is not a move").

/** The states a webhook message ends in. */
export const MESSAGES_FINISHED: readonly WebhookMessageStatus[] = ['delivered', 'failed'];

/**
 * The attempts of webhook messages that ended before `cutoff`: the children, deleted before their
 * messages (pruneMessages), so GET /v1/webhooks/{id}/deliveries never lists an attempt whose
 * message is gone.
 */
export async function pruneAttempts(q: Queryable, cutoff: number, limit: number): Promise<number> {
  const result = await q
    .deleteFrom('webhook_attempts')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('webhook_attempts as a')
        .innerJoin('webhook_messages as m', (join) =>
          join.onRef('m.webhook_id', '=', 'a.webhook_id').onRef('m.event_id', '=', 'a.event_id'),
        )
        .select('a.id')
        .where('m.status', 'in', MESSAGES_FINISHED)
        .where('m.updated_at', '<', cutoff)
        .limit(limit),
    )
    .executeTakeFirst();
  return rowsChanged(result);
}

/** Webhook messages that ended before `cutoff` and have no attempt left. */
export async function pruneMessages(q: Queryable, cutoff: number, limit: number): Promise<number> {
  const result = await q
    .deleteFrom('webhook_messages')
    .where('status', 'in', MESSAGES_FINISHED)
    .where('updated_at', '<', cutoff)
    .where(({ eb, refTuple, selectFrom }) =>
      eb(
        refTuple('webhook_id', 'event_id'),
        'in',
        selectFrom('webhook_messages as m')
          .select(['m.webhook_id', 'm.event_id'])
          .where('m.status', 'in', MESSAGES_FINISHED)
          .where('m.updated_at', '<', cutoff)
          .where((m) =>
            m.not(
              m.exists(
                m
                  .selectFrom('webhook_attempts as a')
                  .select('a.id')
                  .whereRef('a.webhook_id', '=', 'm.webhook_id')
                  .whereRef('a.event_id', '=', 'm.event_id'),
              ),
            ),
          )
          .limit(limit)
          .$asTuple('webhook_id', 'event_id'),
      ),
    )
    .executeTakeFirst();
  return rowsChanged(result);
}
