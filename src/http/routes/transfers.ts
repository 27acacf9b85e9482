// Copy, transfer and job polling (docs/api.md, "Copy" and "Polling"): job failures,
// retry and cancel.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { Plan } from '../../api/plans.js';
import { BandwidthLimit, Failures, Filter, Job, Target, Transfer } from '../../api/transfers.js';
import { PAGE_DEFAULT, parseLimit } from '../../db/paging.js';
import type { Plans } from '../../domain/plans/plans.js';
import type { Copies } from '../../domain/transfers/copy.js';
import type { JobControl } from '../../domain/transfers/job-control.js';
import { MANIFEST_MAX_KEYS } from '../../domain/transfers/targets.js';
import type { TransferViews } from '../../domain/transfers/views.js';
import { invalid } from '../../errors.js';
import { COMPARE_MODES, OVERWRITE_MODES } from '../../states.js';
import { workspaceOf } from '../auth.js';
import { errors, IdParam, oneOf, Paging, Path } from '../schemas.js';

/** A copy body may be 8 MiB (a 100,000-key manifest; docs/api.md, "Copy"). */
export const COPY_BODY_LIMIT = 8 * 1024 * 1024;

/** The body of POST /v1/copy; a schedule's copy action is one too (src/http/routes/schedules.ts). */
const CopyFields = {
  from: Target,
  to: Target,
  manifest: Type.Optional(Type.Array(Path({ minLength: 0 }), { maxItems: MANIFEST_MAX_KEYS })),
  overwrite: Type.Optional(oneOf(OVERWRITE_MODES)),
  filter: Type.Optional(Filter),
  bandwidth_limit: Type.Optional(BandwidthLimit),
};
/** The body of POST /v1/copy without dry_run: a schedule's copy action (docs/api.md, "Schedules"). */
export const CopyBody = Type.Object(CopyFields, { additionalProperties: false, required: ['from', 'to'] });

const SyncFields = {
  from: Target,
  to: Target,
  compare: Type.Optional(oneOf(COMPARE_MODES)),
  delete: Type.Optional(Type.Boolean()),
  max_delete: Type.Optional(Type.Integer({ minimum: 0 })),
  filter: Type.Optional(Filter),
  bandwidth_limit: Type.Optional(BandwidthLimit),
};
/** The body of POST /v1/sync without dry_run: a schedule's sync action. */
export const SyncBody = Type.Object(SyncFields, { additionalProperties: false, required: ['from', 'to'] });

const DryRun = (what: string) =>
  Type.Optional(Type.Boolean({ description: `answer a plan of ${what} and change nothing (see Plans)` }));

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
}

export const transferRoutes =
  (deps: TransferRouteDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { copies, views, control } = deps;

    app.post(
      '/v1/copy',
      {
        bodyLimit: COPY_BODY_LIMIT,
        schema: {
          summary: 'Copy an object, or every object under a prefix',
          tags: ['transfers'],
          body: Type.Object(
            { ...CopyFields, dry_run: DryRun('a bulk copy') },
            { additionalProperties: false, required: ['from', 'to'] },
          ),
          response: {
            200: Plan,
            202: Type.Union([
              Type.Object({ id: Type.String({ format: 'uuid' }), status: Type.Literal('queued') }),
              Type.Object({ job_id: Type.String({ format: 'uuid' }), status: Type.Literal('planning') }),
            ]),
            ...errors(400, 401, 404, 409, 413, 429),
          },
        },
      },
      async (request, reply) => {
        const { from, to, manifest, overwrite, filter, dry_run, bandwidth_limit } = request.body;
        const body = {
          from,
          to,
          ...(manifest === undefined ? {} : { manifest }),
          ...(overwrite === undefined ? {} : { overwrite }),
          ...(filter === undefined ? {} : { filter }),
          ...(bandwidth_limit === undefined ? {} : { bandwidth_limit }),
        };
        if (dry_run === true)
          return reply.code(200).send(await deps.plans.copy(workspaceOf(request), body, PAGE_DEFAULT));
        const accepted = await copies.accept(workspaceOf(request), body);
        deps.queued();
        return reply.code(202).send(accepted);
      },
    );

    app.post(
      '/v1/sync',
      {
        schema: {
          summary:
            'Make a prefix hold what another holds: copy what is missing or different, optionally delete the rest',
          tags: ['transfers'],
          body: Type.Object(
            { ...SyncFields, dry_run: DryRun('the sync') },
            { additionalProperties: false, required: ['from', 'to'] },
          ),
          response: {
            200: Plan,
            202: Type.Object({ job_id: Type.String({ format: 'uuid' }), status: Type.Literal('planning') }),
            ...errors(400, 401, 404, 409, 429),
          },
        },
      },
      async (request, reply) => {
        const {
          from,
          to,
          compare,
          delete: remove,
          max_delete,
          filter,
          dry_run,
          bandwidth_limit,
        } = request.body;
        const body = {
          from,
          to,
          ...(compare === undefined ? {} : { compare }),
          ...(remove === undefined ? {} : { delete: remove }),
          ...(max_delete === undefined ? {} : { max_delete }),
          ...(filter === undefined ? {} : { filter }),
          ...(bandwidth_limit === undefined ? {} : { bandwidth_limit }),
        };
        if (dry_run === true)
          return reply.code(200).send(await deps.plans.sync(workspaceOf(request), body, PAGE_DEFAULT));
        const accepted = await copies.sync(workspaceOf(request), body);
        deps.queued();
        return reply.code(202).send(accepted);
      },
    );

    app.get(
      '/v1/transfers/:id',
      {
        schema: {
          summary: 'Poll a transfer',
          tags: ['transfers'],
          params: IdParam,
          response: { 200: Transfer, ...errors(401, 404) },
        },
      },
      async (request) => views.transfer(workspaceOf(request), request.params.id),
    );

    app.get(
      '/v1/transfers',
      {
        schema: {
          summary: "List the workspace's transfers, newest first",
          tags: ['transfers'],
          querystring: Paging,
          response: {
            200: Type.Object({
              transfers: Type.Array(Transfer),
              next_cursor: Type.Optional(Type.String()),
            }),
            ...errors(400, 401),
          },
        },
      },
      async (request) => {
        const page = await views.transfers(
          workspaceOf(request),
          parseLimit(request.query.limit),
          request.query.cursor,
        );
        return { transfers: page.items, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
      },
    );

    app.get(
      '/v1/transfers/:id/failures',
      {
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
          workspaceOf(request),
          request.params.id,
          parseLimit(request.query.limit),
          request.query.cursor,
        ),
    );

    app.post(
      '/v1/transfers/:id/retry',
      {
        schema: {
          summary: 'Run the failed objects of a failed transfer over several objects again',
          tags: ['transfers'],
          params: IdParam,
          response: {
            202: Type.Object({ id: Type.String(), status: Type.Literal('queued') }),
            ...errors(400, 401, 404, 409),
          },
        },
      },
      async (request, reply) => {
        noBody(request);
        const result = await control.retryTransfer(workspaceOf(request), request.params.id);
        deps.queued();
        return reply.code(202).send(result);
      },
    );

    app.get(
      '/v1/jobs/:id',
      {
        schema: {
          summary: 'Poll a bulk job',
          tags: ['jobs'],
          params: IdParam,
          response: { 200: Job, ...errors(401, 404) },
        },
      },
      async (request) => views.job(workspaceOf(request), request.params.id),
    );

    app.get(
      '/v1/jobs',
      {
        schema: {
          summary: "List the workspace's bulk jobs, newest first",
          tags: ['jobs'],
          querystring: Type.Object(
            {
              ...Paging.properties,
              schedule_id: Type.Optional(
                Type.String({ format: 'uuid', maxLength: 36, description: "Only this schedule's runs" }),
              ),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({ jobs: Type.Array(Job), next_cursor: Type.Optional(Type.String()) }),
            ...errors(400, 401),
          },
        },
      },
      async (request) => {
        const page = await views.jobs(
          workspaceOf(request),
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
          workspaceOf(request),
          request.params.id,
          parseLimit(request.query.limit),
          request.query.cursor,
        ),
    );

    app.post(
      '/v1/jobs/:id/retry',
      {
        schema: {
          summary: 'Re-plan the failed objects of a partial or failed job',
          tags: ['jobs'],
          params: IdParam,
          response: {
            202: Type.Object({ job_id: Type.String(), status: Type.Literal('planning') }),
            ...errors(400, 401, 404, 409),
          },
        },
      },
      async (request, reply) => {
        noBody(request);
        const result = await control.retry(workspaceOf(request), request.params.id);
        deps.queued();
        return reply.code(202).send(result);
      },
    );

    app.post(
      '/v1/jobs/:id/cancel',
      {
        schema: {
          summary: 'Stop a job that has not finished',
          tags: ['jobs'],
          params: IdParam,
          response: {
            202: Type.Object({ job_id: Type.String(), status: Type.Literal('canceled') }),
            ...errors(400, 401, 404, 409),
          },
        },
      },
      async (request, reply) => {
        noBody(request);
        return reply.code(202).send(await control.cancel(workspaceOf(request), request.params.id));
      },
    );
  };
