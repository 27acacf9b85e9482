// The webhook outbox: an event is recorded by the code that makes the move it reports, with the same
// database handle (a transaction where the move is one), as one message per subscribed, enabled
// endpoint of the workspace. So a process that dies right after the move has still queued the event,
// and a move that rolls back queues nothing. The body is fixed here, once, so every attempt and every
// endpoint get the same bytes and the same `webhook-id` (docs/webhooks.md, "Payload").
//
// Wake-ups: on PostgreSQL a trigger on webhook_messages sends the `webhook` signal at commit (see the
// migration), to every process. SQLite is one process: the insert wakes this process's deliverers
// through `queuedHere`; their claim runs on the same connection, after the transaction that queued
// the rows.
import { EventEmitter } from 'node:events';
import { SqliteAdapter, sql } from 'kysely';
import type { WebhookEvent } from '../api/events.js';
import { toRfc3339 } from '../clock.js';
import { newId } from '../ids.js';
import type { Queryable } from './moves.js';

/** Emits 'queued' when this process queued webhook messages. */
export const queuedHere = new EventEmitter().setMaxListeners(0);

export interface Event {
  workspaceId: string;
  type: WebhookEvent;
  data: object;
  /** When the move happened (epoch ms): the body's `timestamp`. */
  at: number;
}

/** The LIKE pattern that finds `type` in a webhooks.events list (",a,b,"). */
export function eventPattern(type: string): string {
  return `%,${type.replace(/[\\%_]/g, (c) => `\\${c}`)},%`;
}

/** Queues `event` for every enabled endpoint of its workspace that subscribed to it; how many. */
export async function emit(q: Queryable, event: Event): Promise<number> {
  const eventId = newId();
  const payload = JSON.stringify({ type: event.type, timestamp: toRfc3339(event.at), data: event.data });
  const result = await sql`
    insert into webhook_messages
      (webhook_id, event_id, type, payload, status, attempts, run_after, created_at, updated_at)
    select id, ${eventId}, ${event.type}, ${payload}, 'pending', 0, ${event.at}, ${event.at}, ${event.at}
    from webhooks
    where workspace_id = ${event.workspaceId} and status = 'enabled'
      and events like ${eventPattern(event.type)} escape '\\'`.execute(q);
  const queued = Number(result.numAffectedRows ?? 0n);
  // On PostgreSQL only the trigger's NOTIFY wakes deliverers, this process's too: a wake-up sent from
  // here would come before the commit, and a deliverer on another connection would find nothing.
  if (queued > 0 && q.getExecutor().adapter instanceof SqliteAdapter) queuedHere.emit('queued');
  return queued;
}
