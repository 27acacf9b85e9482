// Bulk jobs (docs/api.md, "Polling"): one polled, the workspace's listed (by schedule too), a job's
// failures and report (docs/api.md, "Reports"), and what can be done to one: retry its failed objects,
// undo what it changed (docs/api.md, "Undo"), cancel it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParam, Paging } from '../../api/input.js';
import { Canceled, Failures, Job, JobPage, JobsQuery, Planning } from '../../api/transfers.js';
import { parseLimit } from '../../db/paging.js';
import { auditOf } from '../audit.js';
import { principalOf } from '../auth.js';
import { noBody } from '../bodies.js';
import { reportResponses, sendReport } from '../report-answer.js';
import { errors } from '../schemas.js';
import type { TransferRouteDeps } from './transfers.js';

export const jobRoutes =
  (deps: TransferRouteDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { views, control } = deps;

    app.get(
      '/v1/jobs/:id',
      {
        config: { scope: 'read' },
        schema: {
          summary: 'Poll a bulk job',
          tags: ['jobs'],
          params: IdParam,
          response: { 200: Job, ...errors(401, 404) },
        },
      },
      async (request) => views.job(principalOf(request), request.params.id),
    );

    app.get(
      '/v1/jobs',
      {
        config: { scope: 'read' },
        schema: {
          summary: "List the workspace's bulk jobs, newest first",
          tags: ['jobs'],
          querystring: JobsQuery,
          response: {
            200: JobPage,
            ...errors(400, 401),
          },
        },
      },
      async (request) => {
        const page = await views.jobs(
          principalOf(request),
          parseLimit(request.query.limit),
          request.query.cursor,
          request.query.schedule_id,
        );
        return { jobs: page.items, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
      },
    );

    app.get(
      '/v1/jobs/:id/failures',
      {
        config: { scope: 'read' },
        schema: {
          summary: "A job's failed objects",
          tags: ['jobs'],
          params: IdParam,
          querystring: Paging,
          response: {
            200: Failures,
            ...errors(400, 401, 404),
          },
        },
      },
      async (request) =>
        views.failures(
          principalOf(request),
          request.params.id,
          parseLimit(request.query.limit),
          request.query.cursor,
        ),
    );

    app.get(
      '/v1/jobs/:id/report',
      {
        config: { scope: 'read' },
        schema: {
          summary: 'Every object of a job, with its outcome (NDJSON, or CSV with Accept: text/csv)',
          tags: ['jobs'],
          params: IdParam,
          response: reportResponses,
        },
      },
      async (request, reply) => {
        const job = await views.findJob(principalOf(request), request.params.id);
        return sendReport(deps, request, reply, job, `job-${job.id}-report`);
      },
    );

    app.post(
      '/v1/jobs/:id/retry',
      {
        config: { scope: 'transfer' },
        schema: {
          summary: 'Re-plan the failed objects of a partial or failed job',
          tags: ['jobs'],
          params: IdParam,
          response: {
            202: Planning,
            ...errors(400, 401, 404, 409),
          },
        },
      },
      async (request, reply) => {
        noBody(request);
        const result = await control.retry(principalOf(request), request.params.id, auditOf(request));
        deps.queued();
        return reply.code(202).send(result);
      },
    );

    app.post(
      '/v1/jobs/:id/undo',
      {
        // The job's own scope (transfer, or remove for a remove), and remove: an undo deletes.
        config: {
          scope: (request) => control.undoNeeds(principalOf(request), (request.params as { id: string }).id),
        },
        schema: {
          summary:
            'Put back what a finished job (or a move or remove) changed: remove what it created, restore what it deleted or overwrote from its backup',
          tags: ['jobs'],
          params: IdParam,
          response: {
            202: Planning,
            ...errors(400, 401, 404, 409),
          },
        },
      },
      async (request, reply) => {
        noBody(request);
        const result = await control.undo(principalOf(request), request.params.id, auditOf(request));
        deps.queued();
        return reply.code(202).send(result);
      },
    );

    app.post(
      '/v1/jobs/:id/cancel',
      {
        config: { scope: 'transfer' },
        schema: {
          summary: 'Stop a job that has not finished',
          tags: ['jobs'],
          params: IdParam,
          response: {
            202: Canceled,
            ...errors(400, 401, 404, 409),
          },
        },
      },
      async (request, reply) => {
        noBody(request);
        return reply
          .code(202)
          .send(await control.cancel(principalOf(request), request.params.id, auditOf(request)));
      },
    );
  };
