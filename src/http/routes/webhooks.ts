// Webhooks (docs/webhooks.md): endpoints of the caller's workspace, and each one's delivery log.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { WEBHOOK_EVENTS } from '../../api/events.js';
import { parseLimit } from '../../db/paging.js';
import { URL_MAX, type Webhooks } from '../../domain/webhooks/webhooks.js';
import { WEBHOOK_STATES } from '../../states.js';
import { auditOf } from '../audit.js';
import { workspaceOf } from '../auth.js';
import { errors, IdParam, NoContent, oneOf, Paging, Timestamp, Url as UrlText, Word } from '../schemas.js';

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

const WebhookSchema = Type.Object(fields);

const Created = Type.Object({
  ...fields,
  secret: Type.String({ description: 'The signing secret (whsec_…), shown only in this response' }),
});

const Delivery = Type.Object({
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

export const webhookRoutes =
  (webhooks: Webhooks): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/webhooks',
      {
        config: { scope: 'admin', rateLimit: 'webhooks', wholeWorkspace: true },
        schema: {
          summary: 'Register a webhook endpoint; the answer holds its signing secret, once',
          tags: ['webhooks'],
          body: Type.Object({ url: Url, events: Events }, { additionalProperties: false }),
          response: { 201: Created, ...errors(400, 401, 409) },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await webhooks.create(workspaceOf(request), request.body, auditOf(request))),
    );

    app.get(
      '/v1/webhooks',
      {
        config: { scope: 'admin', wholeWorkspace: true },
        schema: {
          summary: "List the workspace's webhook endpoints",
          tags: ['webhooks'],
          response: { 200: Type.Object({ webhooks: Type.Array(WebhookSchema) }), ...errors(401) },
        },
      },
      async (request) => ({ webhooks: await webhooks.list(workspaceOf(request)) }),
    );

    app.get(
      '/v1/webhooks/:id',
      {
        config: { scope: 'admin', wholeWorkspace: true },
        schema: {
          summary: 'Read a webhook endpoint',
          tags: ['webhooks'],
          params: IdParam,
          response: { 200: WebhookSchema, ...errors(401, 404) },
        },
      },
      async (request) => webhooks.get(workspaceOf(request), request.params.id),
    );

    app.patch(
      '/v1/webhooks/:id',
      {
        config: { scope: 'admin', rateLimit: 'webhooks', wholeWorkspace: true },
        schema: {
          summary: 'Change the URL or events of a webhook endpoint, or enable or disable it',
          tags: ['webhooks'],
          params: IdParam,
          body: Type.Object(
            {
              url: Type.Optional(Url),
              events: Type.Optional(Events),
              status: Type.Optional(oneOf(WEBHOOK_STATES, 'enabled re-enables a disabled endpoint')),
            },
            { additionalProperties: false, minProperties: 1 },
          ),
          response: { 200: WebhookSchema, ...errors(400, 401, 404) },
        },
      },
      async (request) =>
        webhooks.update(workspaceOf(request), request.params.id, request.body, auditOf(request)),
    );

    app.delete(
      '/v1/webhooks/:id',
      {
        config: { scope: 'admin', rateLimit: 'webhooks', wholeWorkspace: true },
        schema: {
          summary: 'Delete a webhook endpoint, its queued messages and its delivery log',
          tags: ['webhooks'],
          params: IdParam,
          response: { 204: NoContent, ...errors(401, 404) },
        },
      },
      async (request, reply) => {
        await webhooks.delete(workspaceOf(request), request.params.id, auditOf(request));
        return reply.code(204).send();
      },
    );

    app.get(
      '/v1/webhooks/:id/deliveries',
      {
        config: { scope: 'admin', wholeWorkspace: true },
        schema: {
          summary: "A webhook endpoint's delivery attempts, newest first",
          tags: ['webhooks'],
          params: IdParam,
          querystring: Paging,
          response: {
            200: Type.Object({ deliveries: Type.Array(Delivery), next_cursor: Type.Optional(Type.String()) }),
            ...errors(400, 401, 404),
          },
        },
      },
      async (request) =>
        webhooks.deliveries(
          workspaceOf(request),
          request.params.id,
          parseLimit(request.query.limit),
          request.query.cursor,
        ),
    );
  };
