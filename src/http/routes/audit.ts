// The audit log (docs/api.md, "Audit log"): what was done in the workspace, by which key, from where.
// Reading it needs the admin scope. The events are written by the changes themselves
// (src/domain/audit/audit.ts); this only reads.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AuditPage, AuditQuery } from '../../api/audit.js';
import type { Db } from '../../db/database.js';
import { parseLimit } from '../../db/paging.js';
import { listAudit } from '../../domain/audit/views.js';
import { workspaceOf } from '../auth.js';
import { errors } from '../schemas.js';

export const auditRoutes =
  (db: Db): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/audit',
      {
        config: { scope: 'admin', wholeWorkspace: true },
        schema: {
          summary: "The workspace's audit log, newest first",
          description:
            'Every request that changed something, every share link download and wrong password, with the key, the status, the address and the user agent; never a secret or a body.',
          tags: ['audit'],
          querystring: AuditQuery,
          response: { 200: AuditPage, ...errors(400, 401) },
        },
      },
      async (request) => {
        const { limit, cursor, action, key_id: keyId, after, before } = request.query;
        const page = await listAudit(
          db,
          workspaceOf(request),
          {
            ...(action === undefined ? {} : { action }),
            ...(keyId === undefined ? {} : { keyId }),
            ...(after === undefined ? {} : { after }),
            ...(before === undefined ? {} : { before }),
          },
          parseLimit(limit),
          cursor,
        );
        return { events: page.items, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
      },
    );
  };
