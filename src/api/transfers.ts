// The transfer and the job as the API answers them (docs/api.md, "Polling"), their lists, and the 202
// answers of the work that starts them (queued, planning, canceled): one TypeBox schema each,
// from which come the routes' response schemas (so /openapi.json), the server's view types
// (src/api/views.ts), the webhook events' data, and the types of the CLI and the console, which import
// them type-only. A field added here is checked by the compiler everywhere one of them is built.
import { type Static, Type } from 'typebox';
import type { FilterSpec, JobOptions } from '../durable/work.js';
import {
  COMPARE_MODES,
  JOB_KINDS,
  JOB_STATES,
  OVERWRITE_MODES,
  TRANSFER_KINDS,
  TRANSFER_STATES,
  VERIFY_MODES,
} from '../states.js';
import { Paging } from './input.js';
import {
  IdText,
  Label,
  NO_NUL,
  oneOf,
  Path,
  SINGLE_LINE,
  TIMESTAMP_MAX_LENGTH,
  Timestamp,
  text,
} from './text.js';

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

/**
 * A filter on a bulk copy, sync, or patterned move and remove (docs/api.md, "Filters"); the domain
 * (src/objects/filter.ts) checks the globs and times and names the field it refuses.
 */
/** A filter's glob: a pattern of paths, so no NUL (PostgreSQL text cannot hold one), as paths. */
const FilterGlob = text(8192, NO_NUL, 1);
const FilterTime = text(TIMESTAMP_MAX_LENGTH, SINGLE_LINE, 1);

export const Filter = Type.Object(
  {
    include: Type.Optional(
      Type.Array(FilterGlob(), {
        maxItems: 100,
        description:
          'globs; without "/" one matches a name at any depth, with "/" it is anchored at the source prefix; an object must match one',
      }),
    ),
    exclude: Type.Optional(
      Type.Array(FilterGlob(), {
        maxItems: 100,
        description:
          'globs; without "/" one matches a name at any depth, with "/" it is anchored at the source prefix; an object must match none',
      }),
    ),
    min_size: Type.Optional(Type.Integer({ minimum: 0, description: 'bytes' })),
    max_size: Type.Optional(Type.Integer({ minimum: 0, description: 'bytes' })),
    modified_after: Type.Optional(FilterTime({ description: 'RFC 3339' })),
    modified_before: Type.Optional(FilterTime({ description: 'RFC 3339' })),
  },
  { additionalProperties: false },
);
export type Filter = Static<typeof Filter>;

// A checked filter and a job's options as queued work stores them: the jobs column's schema
// (src/durable/work.ts) declares them.
export type { FilterSpec, JobOptions };

/** The least cap in bytes per second (64 KiB/s): below it a transfer of any size would crawl. */
export const BANDWIDTH_MIN = 64 * 1024;
/** The largest cap (10 GiB/s), well past what one process moves. */
export const BANDWIDTH_MAX = 10 * 1024 ** 3;

/**
 * `bandwidth_limit` (docs/api.md, "Bandwidth"): a cap in bytes per second on the bytes a copy, sync or
 * schedule's job moves through ferry. Bodies declare it with this schema; src/domain/transfers/
 * bandwidth.ts checks it again for callers that do not come through a route.
 */
export const BandwidthLimit = Type.Integer({
  minimum: BANDWIDTH_MIN,
  maximum: BANDWIDTH_MAX,
  description: 'bytes per second through ferry, from 65536 (64 KiB/s)',
});

/**
 * A job's objects by what became of them (docs/api.md, "Polling"). `total` counts every object the job
 * copies, moves, skips or deletes: total = pending + succeeded + skipped + failed + deleted at every
 * moment, so a job with none pending (every complete one) is 100 % done, whatever its kind.
 */
export const Counts = Type.Object({
  total: Type.Integer(),
  pending: Type.Integer({ description: 'not yet done, running ones included' }),
  succeeded: Type.Integer(),
  skipped: Type.Integer(),
  failed: Type.Integer(),
  deleted: Type.Integer({
    description: "a sync's removals at its destination (0 for other jobs: a remove's objects are succeeded)",
  }),
  size_only: Type.Integer({
    description:
      'objects written whose bytes no hash could prove, only their size (docs/api.md, "Verification"); not a state: they are also counted as succeeded',
  }),
  // A verify's (docs/api.md, "Verify"): what it found, each compared object counted once in these four
  // and as succeeded. Absent on other kinds.
  equal: Type.Optional(Type.Integer({ description: "a verify's objects the same on both sides" })),
  differ: Type.Optional(Type.Integer({ description: "a verify's objects on both sides, not the same" })),
  missing_in_destination: Type.Optional(
    Type.Integer({ description: "a verify's objects only the source (from) holds" }),
  ),
  missing_in_source: Type.Optional(
    Type.Integer({ description: "a verify's objects only the destination (to) holds" }),
  ),
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
  bandwidth_limit: Type.Optional(Type.Integer()),
  // A transfer over several objects (docs/api.md, "Polling").
  counts: Type.Optional(Counts),
  // A move's or remove's, as given (docs/api.md, "Undo").
  backup_to: Type.Optional(Type.String()),
  // How a single transfer's written bytes were proven, as a report line says it (docs/api.md,
  // "Verification"); absent when it wrote none or ended before ferry kept it. A transfer over several
  // objects says it on each object's report line.
  verified: Type.Optional(oneOf(['checksum', 'size'] as const)),
  verified_by: Type.Optional(
    Type.String({
      description: 'with verified "checksum": the hash kinds that proved the bytes, comma-separated',
    }),
  ),
});
export type Transfer = Static<typeof Transfer>;

const Ref = Type.Object({ id: Type.String(), path: Type.String() });

export const Job = Type.Object({
  job_id: Type.String({ format: 'uuid' }),
  kind: oneOf(JOB_KINDS),
  status: oneOf(JOB_STATES),
  from: Ref,
  to: Ref,
  overwrite: oneOf(OVERWRITE_MODES),
  // The options given (docs/api.md, "Filters" and "Sync").
  filter: Type.Optional(Filter),
  compare: Type.Optional(oneOf(COMPARE_MODES)),
  delete: Type.Optional(Type.Boolean()),
  max_delete: Type.Optional(Type.Integer()),
  /** A verify's compare mode (docs/api.md, "Verify"). */
  mode: Type.Optional(oneOf(VERIFY_MODES)),
  created_at: Timestamp,
  updated_at: Timestamp,
  started_at: Type.Optional(Timestamp),
  finished_at: Type.Optional(Timestamp),
  counts: Counts,
  bytes_done: Type.Integer(),
  error: Type.Optional(Type.String()),
  /** The plan the job runs (docs/api.md, "Plans"). */
  plan_id: Type.Optional(Type.String({ format: 'uuid' })),
  bandwidth_limit: Type.Optional(Type.Integer()),
  // The schedule whose run started the job (docs/api.md, "Schedules").
  schedule_id: Type.Optional(Type.String({ format: 'uuid' })),
  // Where what it deletes or overwrites is kept, as given (docs/api.md, "Undo").
  backup_to: Type.Optional(Type.String()),
  // An undo's: the job it puts back (docs/api.md, "Undo").
  undo_of: Type.Optional(Type.String({ format: 'uuid' })),
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
      /** Present for an object left alone with a reason (a plan's run, docs/api.md "Plans"). */
      outcome: Type.Optional(Type.Literal('skipped')),
    }),
  ),
  next_cursor: Type.Optional(Type.String()),
});
export type Failures = Static<typeof Failures>;

/** 202 of work queued as one transfer (a single copy, a move, a remove, a plan's move or remove). */
export const Queued = Type.Object({ id: Type.String({ format: 'uuid' }), status: Type.Literal('queued') });
export type Queued = Static<typeof Queued>;

/**
 * 202 of a job that is planning (docs/api.md, "Polling"): a bulk copy, a sync, a verify, a job's retry
 * and undo, a schedule's run now, a plan's copy or sync.
 */
export const Planning = Type.Object({
  job_id: Type.String({ format: 'uuid' }),
  status: Type.Literal('planning'),
});
export type Planning = Static<typeof Planning>;

/** 202 of what may run as one transfer or as a job: POST /v1/copy, a plan's run. */
export const Accepted = Type.Union([Queued, Planning]);
export type Accepted = Static<typeof Accepted>;

/** 202 of a job's cancel. */
export const Canceled = Type.Object({ job_id: Type.String(), status: Type.Literal('canceled') });
export type Canceled = Static<typeof Canceled>;

export const TransferPage = Type.Object({
  transfers: Type.Array(Transfer),
  next_cursor: Type.Optional(Type.String()),
});
export type TransferPage = Static<typeof TransferPage>;

export const JobPage = Type.Object({ jobs: Type.Array(Job), next_cursor: Type.Optional(Type.String()) });
export type JobPage = Static<typeof JobPage>;

/** `?limit=&cursor=&schedule_id=` of GET /v1/jobs. */
export const JobsQuery = Type.Object(
  {
    ...Paging.properties,
    schedule_id: Type.Optional(
      Type.String({ format: 'uuid', maxLength: 36, description: "Only this schedule's runs" }),
    ),
  },
  { additionalProperties: false },
);
export type JobsQuery = Static<typeof JobsQuery>;
