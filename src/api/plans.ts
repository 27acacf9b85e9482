// A plan as the API answers it (docs/api.md, "Plans"): the answer of a dry run and of
// GET /v1/plans/{id}. One TypeBox schema, from which come the routes' response schemas (so
// /openapi.json), the server's view type (src/domain/plans/plans.ts) and the console's type.
import { type Static, Type } from 'typebox';
import { Timestamp } from './text.js';

export const PlanEntry = Type.Object({
  action: Type.String({ description: 'what the run does with it: copy, move or remove' }),
  key: Type.Optional(Type.String({ description: "a copy's key, relative to the source prefix" })),
  from: Type.Optional(Type.String({ description: "a move's source, <location>/<path>" })),
  to: Type.Optional(Type.String({ description: "a move's destination, <location>/<path>" })),
  path: Type.Optional(Type.String({ description: "a remove's path, <location>/<path>" })),
  size: Type.Optional(Type.Integer({ description: 'bytes, as the plan saw them' })),
  etag: Type.Optional(Type.String({ description: 'the ETag the plan saw, where the store has one' })),
});
export type PlanEntry = Static<typeof PlanEntry>;

export const Plan = Type.Object({
  plan_id: Type.String({ format: 'uuid' }),
  kind: Type.String({ description: 'copy, move or remove' }),
  created_at: Timestamp,
  expires_at: Timestamp,
  counts: Type.Record(Type.String(), Type.Integer(), { description: 'entries per action' }),
  total: Type.Integer(),
  ran_at: Type.Optional(Timestamp),
  job_id: Type.Optional(Type.String({ format: 'uuid', description: 'the job that ran the plan (a copy)' })),
  transfer_id: Type.Optional(
    Type.String({ format: 'uuid', description: 'the transfer that ran the plan (a move or remove)' }),
  ),
  entries: Type.Array(PlanEntry),
  next_cursor: Type.Optional(Type.String()),
});
export type Plan = Static<typeof Plan>;
