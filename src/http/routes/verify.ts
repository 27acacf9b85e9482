// Verify (docs/api.md, "Verify"): compare two prefixes and report each object, changing nothing. A job
// of kind verify, polled, reported and canceled as every job is (src/http/routes/jobs.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Planning } from '../../api/transfers.js';
import { VerifyBody } from '../../api/verify.js';
import type { Copies } from '../../domain/transfers/copy.js';
import { auditOf } from '../audit.js';
import { principalOf } from '../auth.js';
import { errors } from '../schemas.js';

export const verifyRoutes =
  (copies: Copies, queued: () => void): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/verify',
      {
        // Reads both prefixes and writes nothing.
        config: { scope: 'read' },
        schema: {
          summary:
            'Compare two prefixes, object by object, and report each as equal, differ, missing_in_destination or missing_in_source; changes nothing',
          tags: ['transfers'],
          body: VerifyBody,
          response: {
            202: Planning,
            ...errors(400, 401, 404, 409, 429),
          },
        },
      },
      async (request, reply) => {
        const body: VerifyBody = request.body;
        const accepted = await copies.verify(principalOf(request), body, undefined, auditOf(request));
        queued();
        return reply.code(202).send(accepted);
      },
    );
  };
