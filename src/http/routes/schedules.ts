// Schedules (docs/api.md, "Schedules"): recurring bulk copies, syncs and verifies of the caller's workspace, their
// recent runs, and a run now.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParam, Paging } from '../../api/input.js';
import {
  CreateScheduleBody,
  Schedule,
  SchedulePage,
  ScheduleWithRuns,
  UpdateScheduleBody,
} from '../../api/schedules.js';
import { Planning } from '../../api/transfers.js';
import { parseLimit } from '../../db/paging.js';
import type { Schedules } from '../../domain/schedules/schedules.js';
import { auditOf } from '../audit.js';
import { deleting, principalOf, syncDeletes } from '../auth.js';
import { errors, NoContent } from '../schemas.js';

/** Whether an action given in a body (not yet checked by its schema) is a sync that deletes. */
function actionDeletes(body: unknown): boolean {
  return syncDeletes((body as { action?: { sync?: unknown } } | null | undefined)?.action?.sync);
}

export const scheduleRoutes =
  (schedules: Schedules, changed: () => void, queued: () => void): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/schedules',
      {
        // A schedule of a sync that deletes needs `remove` as well (docs/api.md, "Scopes").
        config: { scope: (request) => deleting(actionDeletes(request.body)), rateLimit: 'schedules' },
        schema: {
          summary: 'Create a schedule: a bulk copy or a sync run at the times `every` names',
          tags: ['schedules'],
          body: CreateScheduleBody,
          response: { 201: Schedule, ...errors(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        const body: CreateScheduleBody = request.body;
        const created = await schedules.create(principalOf(request), body, auditOf(request));
        changed();
        return reply.code(201).send(created);
      },
    );

    app.get(
      '/v1/schedules',
      {
        config: { scope: 'read' },
        schema: {
          summary: "List the workspace's schedules, newest first",
          tags: ['schedules'],
          querystring: Paging,
          response: {
            200: SchedulePage,
            ...errors(400, 401),
          },
        },
      },
      async (request) => {
        const page = await schedules.list(
          principalOf(request),
          parseLimit(request.query.limit),
          request.query.cursor,
        );
        return { schedules: page.items, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
      },
    );

    app.get(
      '/v1/schedules/:id',
      {
        config: { scope: 'read' },
        schema: {
          summary: 'Read a schedule and its recent runs',
          tags: ['schedules'],
          params: IdParam,
          response: { 200: ScheduleWithRuns, ...errors(401, 404) },
        },
      },
      async (request) => schedules.get(principalOf(request), request.params.id),
    );

    app.patch(
      '/v1/schedules/:id',
      {
        // Giving it an action that deletes needs `remove` as well; pausing, renaming or retiming does not.
        config: { scope: (request) => deleting(actionDeletes(request.body)), rateLimit: 'schedules' },
        schema: {
          summary: 'Change a schedule, or pause and resume it',
          tags: ['schedules'],
          params: IdParam,
          body: UpdateScheduleBody,
          response: { 200: Schedule, ...errors(400, 401, 404, 409) },
        },
      },
      async (request) => {
        const change: UpdateScheduleBody = request.body;
        const updated = await schedules.update(
          principalOf(request),
          request.params.id,
          change,
          auditOf(request),
        );
        changed();
        return updated;
      },
    );

    app.delete(
      '/v1/schedules/:id',
      {
        config: { scope: 'transfer', rateLimit: 'schedules' },
        schema: {
          summary: 'Delete a schedule and its runs (the jobs it started stay)',
          tags: ['schedules'],
          params: IdParam,
          response: { 204: NoContent, ...errors(401, 404) },
        },
      },
      async (request, reply) => {
        await schedules.delete(principalOf(request), request.params.id, auditOf(request));
        return reply.code(204).send();
      },
    );

    app.post(
      '/v1/schedules/:id/run',
      {
        // Not limited here: the copy it starts takes its place in the copy limit as POST /v1/copy does.
        // A run now of a sync that deletes needs `remove` as well, as POST /v1/sync would.
        config: {
          scope: async (request) =>
            deleting(await schedules.deletes(principalOf(request), (request.params as { id: string }).id)),
        },
        schema: {
          summary: 'Run a schedule now: 202 with its job',
          tags: ['schedules'],
          params: IdParam,
          response: { 202: Planning, ...errors(400, 401, 404, 409, 429) },
        },
      },
      async (request, reply) => {
        const started = await schedules.runNow(principalOf(request), request.params.id, auditOf(request));
        queued();
        return reply.code(202).send(started);
      },
    );
  };
