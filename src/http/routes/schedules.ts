// Schedules (docs/api.md, "Schedules"): recurring bulk copies, syncs and verifies of the caller's workspace, their
// recent runs, and a run now.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Schedule, ScheduleWithRuns } from '../../api/schedules.js';
import { SINGLE_LINE, text } from '../../api/text.js';
import { parseLimit } from '../../db/paging.js';
import type { ScheduleAction } from '../../domain/schedules/actions.js';
import { EVERY_MAX } from '../../domain/schedules/every.js';
import type { Schedules } from '../../domain/schedules/schedules.js';
import { auditOf } from '../audit.js';
import { deleting, principalOf, syncDeletes } from '../auth.js';
import { errors, IdParam, Label, NoContent, Paging, Timezone } from '../schemas.js';
import { CopyBody, SyncBody } from './transfers.js';
import { VerifyBody } from './verify.js';

const Every = text(
  EVERY_MAX,
  SINGLE_LINE,
  1,
)({
  description:
    'A five-field cron expression ("30 2 * * *") or words: "every day at 02:00", "every monday at 9am", "every weekday at 18:30", "every 15 minutes", "every 2 hours", "every month on the 1st at 03:00"; at most every 5 minutes',
});

const Action = Type.Union(
  [
    Type.Object({ copy: CopyBody }, { additionalProperties: false, required: ['copy'] }),
    Type.Object({ sync: SyncBody }, { additionalProperties: false, required: ['sync'] }),
    Type.Object({ verify: VerifyBody }, { additionalProperties: false, required: ['verify'] }),
  ],
  {
    description:
      '{"copy": <body of a bulk POST /v1/copy>}, {"sync": <body of POST /v1/sync>} or {"verify": <body of POST /v1/verify>}',
  },
);

const fields = {
  name: Label(),
  every: Every,
  timezone: Type.Optional(Timezone({ description: 'IANA time zone of `every`; default UTC' })),
  action: Action,
  paused: Type.Optional(Type.Boolean()),
};

const Started = Type.Object({ job_id: Type.String({ format: 'uuid' }), status: Type.Literal('planning') });

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
          body: Type.Object(fields, { additionalProperties: false }),
          response: { 201: Schedule, ...errors(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        const { action, ...rest } = request.body;
        const created = await schedules.create(
          principalOf(request),
          { ...rest, action: action as ScheduleAction },
          auditOf(request),
        );
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
            200: Type.Object({ schedules: Type.Array(Schedule), next_cursor: Type.Optional(Type.String()) }),
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
          body: Type.Object(
            {
              name: Type.Optional(fields.name),
              every: Type.Optional(fields.every),
              timezone: fields.timezone,
              action: Type.Optional(fields.action),
              paused: fields.paused,
            },
            { additionalProperties: false, minProperties: 1 },
          ),
          response: { 200: Schedule, ...errors(400, 401, 404, 409) },
        },
      },
      async (request) => {
        const { action, ...rest } = request.body;
        const updated = await schedules.update(
          principalOf(request),
          request.params.id,
          { ...rest, ...(action === undefined ? {} : { action: action as ScheduleAction }) },
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
          response: { 202: Started, ...errors(400, 401, 404, 409, 429) },
        },
      },
      async (request, reply) => {
        const started = await schedules.runNow(principalOf(request), request.params.id, auditOf(request));
        queued();
        return reply.code(202).send(started);
      },
    );
  };
