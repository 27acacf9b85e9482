// A send as the API answers it (docs/api.md, "Send"): POST /send answers the send, GET /v1/sends and
// GET /v1/sends/{id} the send with its file and recipients. The console's types come from here too.
import { type Static, Type } from 'typebox';
import { SEND_STATES } from '../states.js';
import { oneOf, Timestamp, TimestampText } from './text.js';

export const Send = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: oneOf(SEND_STATES),
  scheduled_at: Type.Optional(Timestamp),
  expires_at: Type.Optional(
    TimestampText({
      description: 'RFC 3339; when the link stops working: as given, or 7 days after the mail goes out',
    }),
  ),
  sent_at: Type.Optional(Timestamp),
  error: Type.Optional(Type.String()),
  refused: Type.Optional(Type.Array(Type.String(), { description: 'addresses the SMTP server refused' })),
});
export type Send = Static<typeof Send>;

/** A send as GET /v1/sends and GET /v1/sends/{id} show it. */
export const SendItem = Type.Object({
  ...Send.properties,
  source: Type.String({ description: '<location label>/<path> of the file' }),
  file_name: Type.String(),
  recipients: Type.Integer({ minimum: 1, description: 'how many addresses in to, cc and bcc' }),
  created_at: Timestamp,
});
export type SendItem = Static<typeof SendItem>;

/** A send as any answer shows it: POST /send's (and the event stream's), or with its file and recipients. */
export type AnySend = Send & Partial<Omit<SendItem, keyof Send>>;
