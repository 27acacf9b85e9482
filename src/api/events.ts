// The events a webhook can subscribe to (docs/webhooks.md, "Events") and the `data` each carries: the
// same shape the API answers for the resource, as it stands after the move that caused the event.
import type { JobRow, LocationRow } from '../db/schema.js';
import type { FinishedJobStatus, LocationStatus } from '../states.js';
import type { JobEventData } from './transfers.js';
import { jobView } from './views.js';

export const WEBHOOK_EVENTS = [
  'transfer.complete',
  'transfer.failed',
  'job.complete',
  'job.partial',
  'job.failed',
  'job.canceled',
  'send.sent',
  'send.failed',
  'send.canceled',
  'location.status_changed',
  'share.downloaded',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export function isWebhookEvent(value: string): value is WebhookEvent {
  return (WEBHOOK_EVENTS as readonly string[]).includes(value);
}

/** The event of a job that ended in `status`. */
export function jobEvent(status: FinishedJobStatus) {
  return `job.${status}` as const;
}

/**
 * A job as GET /v1/jobs/{id} shows it, once it has ended: no object runs any more, so its bytes are
 * the finished objects' bytes.
 */
export function jobData(row: JobRow): JobEventData {
  const { updated_at, started_at, ...data } = jobView(row, 0);
  return data;
}

/** A location whose status the refresher moved, with the status it left and why. */
export function locationData(
  row: Pick<LocationRow, 'id' | 'label' | 'provider'>,
  from: LocationStatus,
  to: LocationStatus,
  reason: string | null,
) {
  return {
    id: row.id,
    name: row.label,
    provider: row.provider,
    status: to,
    previous_status: from,
    ...(reason === null ? {} : { reason }),
  };
}
