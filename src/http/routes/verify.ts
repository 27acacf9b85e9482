// Verify (docs/api.md, "Verify"): compare two prefixes and report each object, changing nothing. A job
// of kind verify, polled, reported and canceled as every job is (src/http/routes/transfers.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Filter, Target } from '../../api/transfers.js';
import type { Copies } from '../../domain/transfers/copy.js';
import { VERIFY_MODES } from '../../states.js';
import { auditOf } from '../audit.js';
import { principalOf } from '../auth.js';
import { errors, oneOf } from '../schemas.js';

/** The body of POST /v1/verify; a schedule's verify action is one too (src/http/routes/schedules.ts). */
export const VerifyBody = Type.Object(
  {
    from: Target,
    to: Target,
    mode: Type.Optional(
      oneOf(
        VERIFY_MODES,
        'checksum (default): by a hash both sides report, reading the bytes where they report none in common; download: read and hash both sides; size: sizes only',
      ),
    ),
    filter: Type.Optional(Filter),
  },
  { additionalProperties: false, required: ['from', 'to'] },
);

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
            202: Type.Object({ job_id: Type.String({ format: 'uuid' }), status: Type.Literal('planning') }),
            ...errors(400, 401, 404, 409, 429),
          },
        },
      },
      async (request, reply) => {
        const { from, to, mode, filter } = request.body;
        const body = {
          from,
          to,
          ...(mode === undefined ? {} : { mode }),
          ...(filter === undefined ? {} : { filter }),
        };
        const accepted = await copies.verify(principalOf(request), body, undefined, auditOf(request));
        queued();
        return reply.code(202).send(accepted);
      },
    );
  };
