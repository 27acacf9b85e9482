// A webhook endpoint and its delivery log as the API answers them, and the bodies that make and change
// an endpoint (docs/webhooks.md).
import { type Static, Type } from 'typebox';
import { WEBHOOK_STATES } from '../states.js';
import { WEBHOOK_EVENTS } from './events.js';
import { Url as UrlText, Word } from './input.js';
import { oneOf, Timestamp } from './text.js';

/** The longest endpoint URL. */
export const URL_MAX = 2048;

const Url = UrlText({ maxLength: URL_MAX, description: 'http or https' });
const Events = Type.Array(Word(), {
  minItems: 1,
  maxItems: WEBHOOK_EVENTS.length,
  description: `Event types: ${WEBHOOK_EVENTS.join(', ')}`,
});

const fields = {
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(oneOf(WEBHOOK_EVENTS)),
  status: oneOf(WEBHOOK_STATES),
  disabled_reason: Type.Optional(Type.String()),
  disabled_at: Type.Optional(Timestamp),
  failing_since: Type.Optional(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const Webhook = Type.Object(fields);
export type Webhook = Static<typeof Webhook>;

/** POST /v1/webhooks's answer: the endpoint with its signing secret, shown only then. */
export const CreatedWebhook = Type.Object({
  ...fields,
  secret: Type.String({ description: 'The signing secret (whsec_…), shown only in this response' }),
});
export type CreatedWebhook = Static<typeof CreatedWebhook>;

export const WebhookList = Type.Object({ webhooks: Type.Array(Webhook) });
export type WebhookList = Static<typeof WebhookList>;

export const Delivery = Type.Object({
  id: Type.String({ format: 'uuid' }),
  event_id: Type.String({ description: 'The webhook-id header of the attempt' }),
  type: Type.String(),
  attempt: Type.Integer({ minimum: 1 }),
  status_code: Type.Optional(Type.Integer({ description: "The receiver's HTTP status" })),
  error: Type.Optional(
    Type.String({ description: 'Without an answer: timeout, connection, dns or blocked (egress guard)' }),
  ),
  duration_ms: Type.Integer({ minimum: 0 }),
  at: Timestamp,
});
export type Delivery = Static<typeof Delivery>;

export const DeliveryPage = Type.Object({
  deliveries: Type.Array(Delivery),
  next_cursor: Type.Optional(Type.String()),
});
export type DeliveryPage = Static<typeof DeliveryPage>;

export const CreateWebhookBody = Type.Object({ url: Url, events: Events }, { additionalProperties: false });
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    status: Type.Optional(oneOf(WEBHOOK_STATES, 'enabled re-enables a disabled endpoint')),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;
