// The durable JSON of queued work (src/engine): a transfer's spec, a job's source, destination, options
// and manifest, a job object's work and what it touched, a plan's request, given names and counts and
// its entries' work. Each shape is declared here once, as the schema its column is checked against, and
// its type comes from it (src/lifecycle/specs.ts, src/engine/backup.ts re-export them). Every field added
// after a column's first release is optional (`literal`, `backup`, `backup_to`, `filter`, the ops
// `delete`, `verify`, `unwrite`, `restore`), so rows queued before it read as they are.
import { type Static, Type } from 'typebox';
import { oneOf } from '../api/text.js';
import { COMPARE_MODES, OVERWRITE_MODES, VERIFY_MODES } from '../states.js';
import { codec } from './codec.js';

export const ObjectRef = Type.Object({
  location_id: Type.String(),
  path: Type.String(),
  /** The path is exact bytes, never a pattern (docs/api.md, "Exact names"); absent means false. */
  literal: Type.Optional(Type.Literal(true)),
});
export type ObjectRef = Static<typeof ObjectRef>;

/** A destination that is a folder ends with "/": each source keeps its own name inside it. */
export const DestinationRef = Type.Object({ ...ObjectRef.properties, folder: Type.Boolean() });
export type DestinationRef = Static<typeof DestinationRef>;

/** A checked filter, as queued work stores it (src/objects/filter.ts): times as epoch milliseconds. */
export const FilterSpec = Type.Object({
  include: Type.Optional(Type.Array(Type.String())),
  exclude: Type.Optional(Type.Array(Type.String())),
  min_size: Type.Optional(Type.Number()),
  max_size: Type.Optional(Type.Number()),
  modified_after: Type.Optional(Type.Number()),
  modified_before: Type.Optional(Type.Number()),
});
export type FilterSpec = Static<typeof FilterSpec>;

/** What a bulk job was asked besides its prefixes (the jobs row's `options`; docs/api.md, "Sync"). */
export const JobOptions = Type.Object({
  filter: Type.Optional(FilterSpec),
  /** A sync's: how equal objects are told (default size-modtime). */
  compare: Type.Optional(oneOf(COMPARE_MODES)),
  /** A sync's: remove destination objects the source lacks, at most max_delete of them. */
  delete: Type.Optional(Type.Boolean()),
  /** As given; absent: half the destination's objects, at most 1000 (src/engine/sync-plan.ts). */
  max_delete: Type.Optional(Type.Number()),
  /** A verify's: how objects are compared (docs/api.md, "Verify"; default checksum). */
  mode: Type.Optional(oneOf(VERIFY_MODES)),
  /** `backup_to` as given (docs/api.md, "Undo"). */
  backup_to: Type.Optional(Type.String()),
  /** Where what the job deletes or overwrites is kept: the backup prefix with the job's id, `<prefix>/<job id>/`. */
  backup: Type.Optional(Type.Object({ location_id: Type.String(), path: Type.String() })),
});
export type JobOptions = Static<typeof JobOptions>;

/** Where what a move or remove overwrites or removes is kept, `<prefix>/<transfer id>/` (docs/api.md, "Undo"). */
const backups = {
  backup: Type.Optional(ObjectRef),
  /** `backup_to` as given, for the transfer's view. */
  backup_to: Type.Optional(Type.String()),
};

/** What a queued transfer holds: the request with every location resolved to its id at accept time. */
export const TransferSpec = Type.Union([
  Type.Object({ kind: Type.Literal('copy'), source: ObjectRef, destination: ObjectRef }),
  Type.Object({
    kind: Type.Literal('move'),
    sources: Type.Array(ObjectRef),
    destination: DestinationRef,
    filter: Type.Optional(FilterSpec),
    ...backups,
  }),
  Type.Object({
    kind: Type.Literal('remove'),
    paths: Type.Array(ObjectRef),
    filter: Type.Optional(FilterSpec),
    ...backups,
  }),
  Type.Object({ kind: Type.Literal('pull'), urls: Type.Array(Type.String()), destination: DestinationRef }),
]);
export type TransferSpec = Static<typeof TransferSpec>;

/**
 * What an object's work did at its destination, as a job object keeps it:
 * - `created`: there was no object; the work wrote one (`etag`/`size`: what it wrote);
 * - `replaced`: it overwrote one, kept at `backup`;
 * - `written`: it wrote one without a backup and without knowing whether one was there (cannot come back);
 * - `deleted`: it removed one, kept at `backup` when the job had one;
 * - `moved`: a move's object: gone from `source`, now at `target`, and what it replaced there at `backup`.
 */
export const Touched = Type.Object({
  did: oneOf(['created', 'replaced', 'written', 'deleted', 'moved'] as const),
  target: ObjectRef,
  backup: Type.Optional(ObjectRef),
  /** A move's source, where the object was before. */
  source: Type.Optional(ObjectRef),
  /** A move onto an object that was there, without a backup: what it replaced cannot come back. */
  replacedLost: Type.Optional(Type.Literal(true)),
  etag: Type.Optional(Type.String()),
  size: Type.Optional(Type.Number()),
});
export type Touched = Static<typeof Touched>;

/**
 * What the planner knows of a sync's copy before it runs, written with the object: nothing was at the
 * destination. It has no target until the copy writes and settles with its Touched.
 */
export const PlannedTouched = Type.Object({
  did: Type.Literal('created'),
  target: Type.Optional(Type.Undefined()),
});
export type PlannedTouched = Static<typeof PlannedTouched>;

/**
 * One object of a transfer over several objects, a sync, a verify or an undo (a job object's `work`),
 * with its full source and destination.
 */
export const ObjectWork = Type.Union([
  /** `backup`: where the object it overwrites is kept first (docs/api.md, "Undo"); so for remove and delete. */
  Type.Object({
    op: Type.Literal('move'),
    source: ObjectRef,
    destination: ObjectRef,
    backup: Type.Optional(ObjectRef),
  }),
  Type.Object({ op: Type.Literal('remove'), source: ObjectRef, backup: Type.Optional(ObjectRef) }),
  Type.Object({ op: Type.Literal('pull'), url: Type.String(), destination: DestinationRef }),
  /** A sync's deletion of a destination object its source lacks (counted as deleted). */
  Type.Object({ op: Type.Literal('delete'), target: ObjectRef, backup: Type.Optional(ObjectRef) }),
  /**
   * A verify's comparison its listings could not decide (docs/api.md, "Verify"): the two objects stat'ed,
   * and read and hashed where no hash kind is common to both; nothing is written.
   */
  Type.Object({
    op: Type.Literal('verify'),
    source: ObjectRef,
    destination: ObjectRef,
    mode: oneOf(VERIFY_MODES),
  }),
  /** An undo's object (src/engine/undo.ts): one a job created, removed again. */
  Type.Object({ op: Type.Literal('unwrite'), touched: Touched }),
  /** An undo's object: one a job replaced, deleted or moved, put back. */
  Type.Object({ op: Type.Literal('restore'), touched: Touched }),
]);
export type ObjectWork = Static<typeof ObjectWork>;

/** The request a plan runs, resolved to location ids when the dry run accepted it. */
export const PlanRequest = Type.Union([
  Type.Object({
    kind: Type.Literal('copy'),
    source: ObjectRef,
    destination: ObjectRef,
    overwrite: oneOf(OVERWRITE_MODES),
    filter: Type.Optional(FilterSpec),
    bandwidth_limit: Type.Optional(Type.Number()),
  }),
  Type.Object({
    kind: Type.Literal('sync'),
    source: ObjectRef,
    destination: ObjectRef,
    options: JobOptions,
    bandwidth_limit: Type.Optional(Type.Number()),
  }),
  Type.Object({ kind: oneOf(['move', 'remove'] as const), spec: TransferSpec }),
]);
export type PlanRequest = Static<typeof PlanRequest>;

/** A plan's from and to as given, for the transfer its run queues (display.ts, Given: any JSON). */
export const PlanGiven = Type.Object({ from: Type.Unknown(), to: Type.Optional(Type.Unknown()) });
export type PlanGiven = Static<typeof PlanGiven>;

/** A plan's entries counted by action. */
export const PlanCounts = Type.Record(Type.String(), Type.Number());

export const transferSpec = codec('transfers', 'spec', TransferSpec);
export const jobSource = codec('jobs', 'source', ObjectRef);
export const jobDestination = codec('jobs', 'destination', ObjectRef);
export const jobOptions = codec('jobs', 'options', JobOptions);
/** A bulk copy's keys, relative to the source prefix. */
export const manifestKeys = codec('job_manifests', 'keys', Type.Array(Type.String()));
export const objectWork = codec('job_objects', 'work', ObjectWork);
export const objectTouched = codec('job_objects', 'touched', Type.Union([Touched, PlannedTouched]));
/**
 * The hashes a planned object's listing gave for its source, by kind (src/stores/contract.ts, HashKind),
 * so its first attempt checks the bytes read without a stat (docs/api.md, "Verification").
 */
export const objectSourceHashes = codec(
  'job_objects',
  'source_hashes',
  Type.Partial(
    Type.Object({
      md5: Type.String(),
      sha1: Type.String(),
      sha256: Type.String(),
      crc32c: Type.String(),
      dropbox: Type.String(),
      quickxor: Type.String(),
    }),
  ),
);
export const planRequest = codec('plans', 'request', PlanRequest);
export const planGiven = codec('plans', 'given', PlanGiven);
export const planCounts = codec('plans', 'counts', PlanCounts);
export const planEntryWork = codec('plan_entries', 'work', ObjectWork);
