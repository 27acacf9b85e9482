// Making, listing and revoking share links (docs/api.md, "Share links"). POST /share has no version
// prefix, as move and remove; the list and revoke are under /v1. The links themselves: links.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParam, Paging } from '../../api/input.js';
import { CreatedShare, CreateShareBody, SharePage } from '../../api/shares.js';
import { parseLimit } from '../../db/paging.js';
import type { Shares } from '../../domain/shares/shares.js';
import { auditOf } from '../audit.js';
import { principalOf } from '../auth.js';
import { errors, NoContent } from '../schemas.js';

export const shareRoutes =
  (shares: Shares): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/share',
      {
        config: { scope: 'share', rateLimit: 'share' },
        schema: {
          summary: 'Share one file by a link that ferry serves',
          description:
            'The URL is shown only in this answer. A pattern matching several files is 400 (the message says how many); none is 404.',
          tags: ['shares'],
          body: CreateShareBody,
          response: {
            201: CreatedShare,
            ...errors(400, 401, 404, 409, 502, 503),
          },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await shares.create(principalOf(request), request.body, auditOf(request))),
    );

    app.get(
      '/v1/shares',
      {
        config: { scope: 'read' },
        schema: {
          summary: "List the workspace's share links, newest first",
          tags: ['shares'],
          querystring: Paging,
          response: {
            200: SharePage,
            ...errors(400, 401),
          },
        },
      },
      async (request) => {
        const page = await shares.list(
          principalOf(request),
          parseLimit(request.query.limit),
          request.query.cursor,
        );
        return { shares: page.items, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
      },
    );

    app.delete(
      '/v1/shares/:id',
      {
        config: { scope: 'share' },
        schema: {
          summary: 'Revoke a share link at once',
          tags: ['shares'],
          params: IdParam,
          response: { 204: NoContent, ...errors(401, 404) },
        },
      },
      async (request, reply) => {
        await shares.revoke(principalOf(request), request.params.id, auditOf(request));
        return reply.code(204).send();
      },
    );
  };
