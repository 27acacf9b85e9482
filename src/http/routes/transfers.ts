// Copy, transfer and job polling (docs/api.md, "Copy" and "Polling"): job failures, reports
// (docs/api.md, "Reports"), retry and cancel.

import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CopyBody, SyncBody } from '../../api/copy.js';
import { IdParam, Paging } from '../../api/input.js';
import { Plan } from '../../api/plans.js';
import { ReportBody } from '../../api/streams.js';
import {
  Accepted,
  Canceled,
  Failures,
  Job,
  JobPage,
  JobsQuery,
  Planning,
  Queued,
  Transfer,
  TransferPage,
} from '../../api/transfers.js';
import { PAGE_DEFAULT, parseLimit } from '../../db/paging.js';
import type { KeyWatch } from '../../domain/key-watch.js';
import type { Plans } from '../../domain/plans/plans.js';
import { noBackupInPlans } from '../../domain/transfers/backup-to.js';
import type { Copies } from '../../domain/transfers/copy.js';
import type { JobControl } from '../../domain/transfers/job-control.js';
import type { JobReports, ReportFormat } from '../../domain/transfers/report.js';
import type { TransferViews } from '../../domain/transfers/views.js';
import { invalid } from '../../errors.js';
import { auditOf } from '../audit.js';
import { deleting, principalOf, readWhenDryRun, syncDeletes } from '../auth.js';
import { attachment } from '../file-answer.js';
import { errors } from '../schemas.js';

/** A copy body may be 8 MiB (a 100,000-key manifest; docs/api.md, "Copy"). */
export const COPY_BODY_LIMIT = 8 * 1024 * 1024;

/** Job retry and cancel take no body: nothing, or {} (docs/api.md, "Polling"). */
export function noBody(request: FastifyRequest): void {
  const body = request.body;
  if (body === undefined || body === null) return;
  if (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return;
  throw invalid('this operation takes no body (send nothing, or {})');
}

export interface TransferRouteDeps {
  copies: Copies;
  /** Dry runs (docs/api.md, "Plans"). */
  plans: Plans;
  views: TransferViews;
  control: JobControl;
  /** Tells a worker in this process that there is new work. */
  queued: () => void;
  reports: JobReports;
  /** A report being streamed ends with its key (docs/api.md, "Live progress"). */
  keyWatch: KeyWatch;
}

/** A report as NDJSON unless the request's Accept asks for text/csv (docs/api.md, "Reports"). */
function reportFormat(request: FastifyRequest): ReportFormat {
  const accept = request.headers.accept ?? '';
  return /(^|,)\s*text\/csv\s*(;|,|$)/i.test(accept) ? 'csv' : 'ndjson';
}

/** Both forms of a report in /openapi.json: a body that streams, line by line. */
const reportResponses = {
  200: {
    description:
      'Every object of the job, in order: one JSON object a line (application/x-ndjson), or CSV with a header row (Accept: text/csv)',
    content: { 'application/x-ndjson': { schema: ReportBody }, 'text/csv': { schema: ReportBody } },
  },
  ...errors(401, 404),
};

export const transferRoutes =
  (deps: TransferRouteDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { copies, views, control } = deps;

    /**
     * Streams a report, a page of rows at a time: a client that goes away stops the reading (the stream
     * is destroyed, and with it the generator that reads the pages), and so does the end of its key.
     */
    const sendReport = (
      request: FastifyRequest,
      reply: FastifyReply,
      job: { id: string } | undefined,
      name: string,
    ) => {
      const format = reportFormat(request);
      const lines = deps.reports.text(job, format, (count, complete) => {
        if (!complete) request.log.info({ job: job?.id, lines: count }, 'report stopped before its end');
      });
      const out = Readable.from(lines, { objectMode: false });
      const unwatch = deps.keyWatch.watch(principalOf(request).keyId, () => {
        out.destroy();
        reply.raw.destroy();
      });
      reply.raw.once('close', () => {
        unwatch();
        out.destroy();
      });
      return reply
        .header(
          'content-type',
          format === 'csv'
            ? 'text/csv; charset=utf-8; header=present'
            : 'application/x-ndjson; charset=utf-8',
        )
        .header('content-disposition', attachment(`${name}.${format === 'csv' ? 'csv' : 'ndjson'}`))
        .header('cache-control', 'no-store')
        .send(out);
    };

    app.post(
      '/v1/copy',
      {
        bodyLimit: COPY_BODY_LIMIT,
        config: { scope: readWhenDryRun('transfer') },
        schema: {
          summary: 'Copy an object, or every object under a prefix',
          tags: ['transfers'],
          body: CopyBody,
          response: {
            200: Plan,
            202: Accepted,
            ...errors(400, 401, 404, 409, 413, 429),
          },
        },
      },
      async (request, reply) => {
        const { dry_run, ...body }: CopyBody = request.body;
        if (dry_run === true && body.backup_to !== undefined) throw noBackupInPlans();
        if (dry_run === true)
          return reply
            .code(200)
            .send(await deps.plans.copy(principalOf(request), body, PAGE_DEFAULT, auditOf(request)));
        const accepted = await copies.accept(principalOf(request), body, undefined, auditOf(request));
        deps.queued();
        return reply.code(202).send(accepted);
      },
    );

    app.post(
      '/v1/sync',
      {
        // A dry run is a read; a sync that deletes needs `remove` as well as `transfer`.
        config: { scope: (request) => readWhenDryRun(deleting(syncDeletes(request.body)))(request) },
        schema: {
          summary:
            'Make a prefix hold what another holds: copy what is missing or different, optionally delete the rest',
          tags: ['transfers'],
          body: SyncBody,
          response: {
            200: Plan,
            202: Planning,
            ...errors(400, 401, 404, 409, 429),
          },
        },
      },
      async (request, reply) => {
        const { dry_run, ...body }: SyncBody = request.body;
        if (dry_run === true && body.backup_to !== undefined) throw noBackupInPlans();
        if (dry_run === true)
          return reply
            .code(200)
            .send(await deps.plans.sync(principalOf(request), body, PAGE_DEFAULT, auditOf(request)));
        const accepted = await copies.sync(principalOf(request), body, undefined, auditOf(request));
        deps.queued();
        return reply.code(202).send(accepted);
      },
    );

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
        return sendReport(request, reply, job, `transfer-${transfer.id}-report`);
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
        return sendReport(request, reply, job, `job-${job.id}-report`);
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
