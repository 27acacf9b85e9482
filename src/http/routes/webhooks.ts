// Webhooks (docs/webhooks.md): endpoints of the caller's workspace, and each one's delivery log.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParam, Paging } from '../../api/input.js';
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeliveryPage,
  UpdateWebhookBody,
  Webhook,
  WebhookList,
} from '../../api/webhooks.js';
import { parseLimit } from '../../db/paging.js';
import type { Webhooks } from '../../domain/webhooks/webhooks.js';
import { auditOf } from '../audit.js';
import { workspaceOf } from '../auth.js';
import { errors, NoContent } from '../schemas.js';

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
          body: CreateWebhookBody,
          response: { 201: CreatedWebhook, ...errors(400, 401, 409) },
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
          response: { 200: WebhookList, ...errors(401) },
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
          response: { 200: Webhook, ...errors(401, 404) },
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
          body: UpdateWebhookBody,
          response: { 200: Webhook, ...errors(400, 401, 404) },
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
            200: DeliveryPage,
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
