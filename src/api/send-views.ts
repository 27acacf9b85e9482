// What GET /v1/sends and GET /v1/sends/{id} show of a send (docs/api.md, "Send"), and the event
// stream and webhook events with them.

import type { Kysely } from 'kysely';
import { toRfc3339 } from '../clock.js';
import type { Database, SendRow } from '../db/schema.js';
import { sendRefused } from '../durable/records.js';
import type { Send, SendItem } from './sends.js';

/** A send as the answer to POST /v1/send shows it; one schema, src/api/sends.ts. */
export type SendView = Send;
/** A send as GET /v1/sends and GET /v1/sends/{id} show it (docs/api.md, "Send"). */
export type { SendItem };

export function sendView(row: SendRow): SendView {
  const v: SendView = { id: row.id, status: row.status };
  if (row.scheduled_at !== null) v.scheduled_at = toRfc3339(row.scheduled_at);
  // Sends made before links had a default expiry may have none.
  if (row.link_expires_at !== null) v.expires_at = toRfc3339(row.link_expires_at);
  if (row.sent_at !== null) v.sent_at = toRfc3339(row.sent_at);
  if (row.error !== null) v.error = row.error;
  if (row.refused !== null) v.refused = sendRefused.decode(row.refused, row.id);
  return v;
}

export function sendItem(row: SendRow, label: string | undefined): SendItem {
  return {
    ...sendView(row),
    source: `${label ?? row.location_id}/${row.path}`,
    file_name: row.file_name,
    recipients: row.recipient_count,
    created_at: toRfc3339(row.created_at),
  };
}

/** The send as GET /v1/sends/{id} shows it, read through `q` (a transaction's, for webhook events). */
export async function sendItemOf(q: Kysely<Database>, row: SendRow): Promise<SendItem> {
  const location = await q
    .selectFrom('locations')
    .select('label')
    .where('id', '=', row.location_id)
    .executeTakeFirst();
  return sendItem(row, location?.label);
}
