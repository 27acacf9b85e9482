// Send a file by e-mail (docs/api.md, "Send"): POST /send (no version prefix, as share) and its state
// at GET /v1/sends/{id}.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParam, Paging } from '../../api/input.js';
import { Send, SendBody, SendItem, SendPage } from '../../api/sends.js';
import { parseLimit } from '../../db/paging.js';
import type { Sends } from '../../domain/sends/sends.js';
import { auditOf } from '../audit.js';
import { principalOf } from '../auth.js';
import { errors } from '../schemas.js';

/**
 * `added` wakes the send dispatchers of every process: a scheduled send too, since one due before a
 * dispatcher's current sleep ends must make it plan its next wake-up again.
 */
export const sendRoutes =
  (sends: Sends, added: () => void): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/send',
      {
        config: { scope: 'share', rateLimit: 'send' },
        schema: {
          summary: 'E-mail a link to one file, now or at a time given in ISO 8601 or plain words',
          tags: ['sends'],
          body: SendBody,
          response: { 202: Send, ...errors(400, 401, 404, 409, 429, 502, 503) },
        },
      },
      async (request, reply) => {
        const send = await sends.accept(principalOf(request), request.body, auditOf(request));
        added();
        return reply.code(202).send(send);
      },
    );

    app.get(
      '/v1/sends',
      {
        config: { scope: 'read' },
        schema: {
          summary: "List the workspace's sends, newest first",
          tags: ['sends'],
          querystring: Paging,
          response: {
            200: SendPage,
            ...errors(400, 401),
          },
        },
      },
      async (request) => {
        const page = await sends.list(
          principalOf(request),
          parseLimit(request.query.limit),
          request.query.cursor,
        );
        return { sends: page.items, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
      },
    );

    app.get(
      '/v1/sends/:id',
      {
        config: { scope: 'read' },
        schema: {
          summary: 'Read the state of a send',
          tags: ['sends'],
          params: IdParam,
          response: { 200: SendItem, ...errors(401, 404) },
        },
      },
      async (request) => sends.get(principalOf(request), request.params.id),
    );

    app.post(
      '/v1/sends/:id/cancel',
      {
        config: { scope: 'share' },
        schema: {
          summary: 'Cancel a send whose mail has not started (scheduled, or queued and not yet claimed)',
          tags: ['sends'],
          params: IdParam,
          response: { 200: SendItem, ...errors(401, 404, 409) },
        },
      },
      async (request) => {
        const send = await sends.cancel(principalOf(request), request.params.id, auditOf(request));
        added();
        return send;
      },
    );
  };
