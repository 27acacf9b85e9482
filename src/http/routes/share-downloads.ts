// A share link's access log (docs/api.md, "Share links"): its counted downloads, newest first, each with
// when, from which address, the bytes that went and whether the answer completed. The same downloads
// fire the share.downloaded webhook (docs/webhooks.md) and record share.download in the audit log.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParam, Paging } from '../../api/input.js';
import { ShareDownloadPage } from '../../api/shares.js';
import { parseLimit } from '../../db/paging.js';
import type { Shares } from '../../domain/shares/shares.js';
import { principalOf } from '../auth.js';
import { errors } from '../schemas.js';

export const shareDownloadRoutes =
  (shares: Shares): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/shares/:id/downloads',
      {
        config: { scope: 'read' },
        schema: {
          summary: "A share link's downloads, newest first",
          tags: ['shares'],
          params: IdParam,
          querystring: Paging,
          response: {
            200: ShareDownloadPage,
            ...errors(400, 401, 404),
          },
        },
      },
      async (request) => {
        const page = await shares.downloads(
          principalOf(request),
          request.params.id,
          parseLimit(request.query.limit),
          request.query.cursor,
        );
        return { downloads: page.items, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
      },
    );
  };
