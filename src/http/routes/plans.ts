// Plans (docs/api.md, "Plans"): reading a plan's entries page by page, and running it once. The dry
// runs themselves are the copy, move and remove routes with `dry_run: true`.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { IdParam, Paging } from '../../api/input.js';
import { Plan } from '../../api/plans.js';
import { Accepted } from '../../api/transfers.js';
import { parseLimit } from '../../db/paging.js';
import type { Plans } from '../../domain/plans/plans.js';
import { auditOf } from '../audit.js';
import { deleting, type Needs, principalOf } from '../auth.js';
import { noBody } from '../bodies.js';
import { errors } from '../schemas.js';

export const planRoutes =
  (plans: Plans, queued: () => void): FastifyPluginAsyncTypebox =>
  async (app) => {
    /**
     * A plan's run needs what running its request would: `remove` for a removal, `transfer` and
     * `remove` for a sync that deletes, else `transfer`.
     */
    const runScope = async (request: FastifyRequest): Promise<Needs> => {
      const plan = await plans.runOf(principalOf(request), (request.params as { id: string }).id);
      return plan?.kind === 'remove' ? 'remove' : deleting(plan?.deletes === true);
    };

    app.get(
      '/v1/plans/:id',
      {
        config: { scope: 'read' },
        schema: {
          summary: 'A plan and a page of its entries, in listing order',
          tags: ['plans'],
          params: IdParam,
          querystring: Paging,
          response: { 200: Plan, ...errors(400, 401, 404) },
        },
      },
      async (request) =>
        plans.get(
          principalOf(request),
          request.params.id,
          parseLimit(request.query.limit),
          request.query.cursor,
        ),
    );

    app.post(
      '/v1/plans/:id/run',
      {
        config: { scope: runScope },
        schema: {
          summary: 'Run exactly what a plan holds, once',
          tags: ['plans'],
          params: IdParam,
          response: {
            202: Accepted,
            ...errors(400, 401, 404, 409, 410, 429),
          },
        },
      },
      async (request, reply) => {
        noBody(request);
        const accepted = await plans.run(principalOf(request), request.params.id, auditOf(request));
        queued();
        return reply.code(202).send(accepted);
      },
    );
  };
