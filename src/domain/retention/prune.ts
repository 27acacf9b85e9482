// The retention deletes of sends, webhook messages (with their attempts) and share links (with their
// password grants, guesses and download records) (docs/api.md, "Retention"). Each call is one batch of
// at most `limit` rows per statement, meant for a short transaction of its own; the caller repeats it
// until it answers 0. Every DELETE checks the final state itself, so a row that changed since it was
// picked stays. These belong with their lifecycles (src/domain/sends, src/domain/webhooks,
// src/domain/shares) and are kept apart here only until those modules own their writes.
import type { Queryable } from '../../queue/moves.js';
import { rowsChanged } from '../../queue/moves.js';
import type { SendStatus, WebhookMessageStatus } from '../../states.js';

/** The states a send ends in. */
export const SENDS_FINISHED: readonly SendStatus[] = ['sent', 'failed', 'canceled'];
/** The states a webhook message ends in. */
export const MESSAGES_FINISHED: readonly WebhookMessageStatus[] = ['delivered', 'failed'];

/** Sends that ended (their last change) before `cutoff`. */
export async function pruneSends(q: Queryable, cutoff: number, limit: number): Promise<number> {
  const result = await q
    .deleteFrom('sends')
    .where('status', 'in', SENDS_FINISHED)
    .where('updated_at', '<', cutoff)
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('sends')
        .select('id')
        .where('status', 'in', SENDS_FINISHED)
        .where('updated_at', '<', cutoff)
        .orderBy('updated_at')
        .limit(limit),
    )
    .executeTakeFirst();
  return rowsChanged(result);
}

/**
 * The attempts of webhook messages that ended before `cutoff`: the children, deleted before their
 * messages (pruneWebhookMessages), so GET /v1/webhooks/{id}/deliveries never lists an attempt whose
 * message is gone.
 */
export async function pruneWebhookAttempts(q: Queryable, cutoff: number, limit: number): Promise<number> {
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
export async function pruneWebhookMessages(q: Queryable, cutoff: number, limit: number): Promise<number> {
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

/**
 * Share links revoked before `cutoff`, with their grants, guesses and download records first. Only
 * revoked links go: a revoked link answers 404 like one that never existed, so its page does not
 * change, while an expired or used-up link must keep answering 410 (docs/api.md, "Share links").
 */
export async function pruneRevokedShares(q: Queryable, cutoff: number, limit: number): Promise<number> {
  const picked = await q
    .selectFrom('shares')
    .select('id')
    .where('revoked_at', '<', cutoff)
    .orderBy('revoked_at')
    .limit(limit)
    .execute();
  const ids = picked.map((row) => row.id);
  if (ids.length === 0) return 0;
  await q.deleteFrom('share_grants').where('share_id', 'in', ids).execute();
  await q.deleteFrom('share_guesses').where('share_id', 'in', ids).execute();
  await q.deleteFrom('share_downloads').where('share_id', 'in', ids).execute();
  const result = await q
    .deleteFrom('shares')
    .where('id', 'in', ids)
    .where('revoked_at', '<', cutoff)
    .executeTakeFirst();
  return rowsChanged(result);
}
