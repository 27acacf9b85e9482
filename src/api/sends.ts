// A send as the API answers it, and POST /send's body (docs/api.md, "Send"): POST /send answers the
// send, GET /v1/sends and GET /v1/sends/{id} the send with its file and recipients. The console's types
// come from here too.
import { type Static, Type } from 'typebox';
import { SEND_STATES } from '../states.js';
import { Address, Literal, Password, ScheduleText, Text, Timezone } from './input.js';
import { oneOf, Path, Timestamp, TimestampText } from './text.js';

export const MAX_TO = 50;
/** cc and bcc each, and reply-to. */
export const MAX_OTHER = 50;
export const SENDER_NAME_MAX = 100;

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

export const SendPage = Type.Object({
  sends: Type.Array(SendItem),
  next_cursor: Type.Optional(Type.String()),
});
export type SendPage = Static<typeof SendPage>;

const Addresses = (max: number) => Type.Union([Address(), Type.Array(Address(), { maxItems: max })]);

/** POST /send. */
export const SendBody = Type.Object(
  {
    source: Path({
      description: '<location>/<path>; a pattern must match exactly one file',
    }),
    literal: Literal(),
    to: Type.Union([Address(), Type.Array(Address(), { minItems: 1, maxItems: MAX_TO })]),
    cc: Type.Optional(Addresses(MAX_OTHER)),
    bcc: Type.Optional(Addresses(MAX_OTHER)),
    replyTo: Type.Optional(Addresses(MAX_OTHER)),
    text: Type.Optional(Text()),
    password: Type.Optional(Password()),
    scheduledAt: Type.Optional(
      ScheduleText({ description: 'ISO 8601, or words: "in 2 hours", "tomorrow at 9am"' }),
    ),
    timezone: Type.Optional(Timezone({ description: 'IANA zone for words without one; default UTC' })),
    expires_at: Type.Optional(
      TimestampText({
        description: 'when the link stops working; default 7 days after the mail goes out',
      }),
    ),
    sender_name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SENDER_NAME_MAX,
        description:
          'the name the mail comes from ("<name> via ferry") and its subject names; default the workspace\'s name; no line breaks or control characters',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SendBody = Static<typeof SendBody>;
