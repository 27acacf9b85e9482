// Transfers (docs/api.md, "Polling"): one polled, the workspace's listed, a transfer over several
// objects' failures and report (docs/api.md, "Reports"), and its failed objects run again. A transfer
// over several objects runs as a job: jobs.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParam, Paging } from '../../api/input.js';
import { Failures, Queued, Transfer, TransferPage } from '../../api/transfers.js';
import { parseLimit } from '../../db/paging.js';
import type { JobControl } from '../../domain/transfers/job-control.js';
import type { TransferViews } from '../../domain/transfers/views.js';
import { auditOf } from '../audit.js';
import { principalOf } from '../auth.js';
import { noBody } from '../bodies.js';
import { type ReportDeps, reportResponses, sendReport } from '../report-answer.js';
import { errors } from '../schemas.js';

/** What the transfer and job routes read and control. */
export interface TransferRouteDeps extends ReportDeps {
  views: TransferViews;
  control: JobControl;
  /** Tells a worker in this process that there is new work. */
  queued: () => void;
}

export const transferRoutes =
  (deps: TransferRouteDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { views, control } = deps;

    app.get(
      '/v1/transfers/:id',
      {
        config: { scope: 'read' },
        schema: {
          summary: 'Poll a transfer',
          tags: ['transfers'],
          params: IdParam,
          response: { 200: Transfer, ...errors(401, 404) },
        },
      },
      async (request) => views.transfer(principalOf(request), request.params.id),
    );

    app.get(
      '/v1/transfers',
      {
        config: { scope: 'read' },
        schema: {
          summary: "List the workspace's transfers, newest first",
          tags: ['transfers'],
          querystring: Paging,
          response: {
            200: TransferPage,
            ...errors(400, 401),
          },
        },
      },
      async (request) => {
        const page = await views.transfers(
          principalOf(request),
          parseLimit(request.query.limit),
          request.query.cursor,
        );
        return { transfers: page.items, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
      },
    );

    app.get(
      '/v1/transfers/:id/failures',
      {
        config: { scope: 'read' },
        schema: {
          summary: "A transfer's failed objects (a transfer over several objects)",
          tags: ['transfers'],
          params: IdParam,
          querystring: Paging,
          response: { 200: Failures, ...errors(400, 401, 404) },
        },
      },
      async (request) =>
        views.transferFailures(
          principalOf(request),
          request.params.id,
          parseLimit(request.query.limit),
          request.query.cursor,
        ),
    );

    app.get(
      '/v1/transfers/:id/report',
      {
        config: { scope: 'read' },
        schema: {
          summary: 'Every object of a transfer over several objects, with its outcome (NDJSON or CSV)',
          tags: ['transfers'],
          params: IdParam,
          response: reportResponses,
        },
      },
      async (request, reply) => {
        const transfer = await views.findTransfer(principalOf(request), request.params.id);
        // A single transfer has no objects of its own: its report is empty (its GET says what happened).
        const job = await views.jobOf(transfer.id);
        return sendReport(deps, request, reply, job, `transfer-${transfer.id}-report`);
      },
    );

    app.post(
      '/v1/transfers/:id/retry',
      {
        config: { scope: 'transfer' },
        schema: {
          summary: 'Run the failed objects of a failed transfer over several objects again',
          tags: ['transfers'],
          params: IdParam,
          response: {
            202: Queued,
            ...errors(400, 401, 404, 409),
          },
        },
      },
      async (request, reply) => {
        noBody(request);
        const result = await control.retryTransfer(principalOf(request), request.params.id, auditOf(request));
        deps.queued();
        return reply.code(202).send(result);
      },
    );
  };
