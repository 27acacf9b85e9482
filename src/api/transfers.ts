// The transfer and the job as the API answers them (docs/api.md, "Polling"): one TypeBox schema each,
// from which come the routes' response schemas (so /openapi.json), the server's view types
// (src/api/views.ts), the webhook events' data, and the types of the CLI and the console, which import
// them type-only. A field added here is checked by the compiler everywhere one of them is built.
import { type Static, Type } from 'typebox';
import { JOB_STATES, OVERWRITE_MODES, TRANSFER_KINDS, TRANSFER_STATES } from '../states.js';
import { IdText, Label, oneOf, Path, Timestamp } from './text.js';

/** A copy's `from` or `to`: `<location>:<path>`, or the location by name or id and the path. */
export const TargetObject = Type.Object(
  {
    name: Type.Optional(Label()),
    id: Type.Optional(IdText()),
    path: Path({ minLength: 0 }),
  },
  { additionalProperties: false, required: ['path'] },
);
export const Target = Type.Union([Path({ minLength: 0, description: '<location>:<path>' }), TargetObject]);
/** A transfer's `from` or `to` as given: a copy's target, or a path, URL or list of them (move, remove, pull). */
export const Given = Type.Union([Target, Type.Array(Type.String())]);

export const Counts = Type.Object({
  total: Type.Integer(),
  pending: Type.Integer(),
  succeeded: Type.Integer(),
  skipped: Type.Integer(),
  failed: Type.Integer(),
});
export type Counts = Static<typeof Counts>;

export const Transfer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: oneOf(TRANSFER_KINDS),
  status: oneOf(TRANSFER_STATES),
  // As the request gave them (docs/api.md, "Polling"); `to` is absent for a remove.
  from: Type.Optional(Given),
  to: Type.Optional(Given),
  created_at: Timestamp,
  updated_at: Timestamp,
  started_at: Type.Optional(Timestamp),
  finished_at: Type.Optional(Timestamp),
  bytes_total: Type.Optional(Type.Integer()),
  bytes_done: Type.Integer(),
  error: Type.Optional(Type.String()),
  // A transfer over several objects (docs/api.md, "Polling").
  counts: Type.Optional(Counts),
});
export type Transfer = Static<typeof Transfer>;

const Ref = Type.Object({ id: Type.String(), path: Type.String() });

export const Job = Type.Object({
  job_id: Type.String({ format: 'uuid' }),
  status: oneOf(JOB_STATES),
  from: Ref,
  to: Ref,
  overwrite: oneOf(OVERWRITE_MODES),
  created_at: Timestamp,
  updated_at: Timestamp,
  started_at: Type.Optional(Timestamp),
  finished_at: Type.Optional(Timestamp),
  counts: Counts,
  bytes_done: Type.Integer(),
  error: Type.Optional(Type.String()),
  // The schedule whose run started the job (docs/api.md, "Schedules").
  schedule_id: Type.Optional(Type.String({ format: 'uuid' })),
});
export type Job = Static<typeof Job>;

/**
 * A job in a webhook event's `data` (docs/webhooks.md, "Events"): the job as GET /v1/jobs/{id} shows it,
 * once it has ended, without its updated_at and started_at.
 */
export type JobEventData = Omit<Job, 'updated_at' | 'started_at'>;

/** A job's (or a transfer's) failed objects, paged by object sequence. */
export const Failures = Type.Object({
  failures: Type.Array(
    Type.Object({
      key: Type.String(),
      error: Type.String(),
      attempts: Type.Integer(),
      last_attempt_at: Type.Optional(Timestamp),
    }),
  ),
  next_cursor: Type.Optional(Type.String()),
});
export type Failures = Static<typeof Failures>;
