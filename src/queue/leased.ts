// Every table of ferry whose rows are worked on under a lease, declared once (the queue's README, "What
// is leased"): which columns name a row, its holder and its lease's end, in which states a row holds it,
// what a claim counts, and what becomes of a row whose lease ran out. src/queue/leases.ts takes, renews,
// takes back, hands back and frees every lease through these declarations and nothing else; the
// lifecycle tables of moves (src/lifecycle/: transfers, job objects, sends) take their lease moves
// from them (moves.ts, leaseMoves). No file outside src/queue writes a lease column
// (test/layering/layering.test.ts).
import {
  JOB_ACTIVE,
  type ObjectStatus,
  type SendStatus,
  type TransferStatus,
  type WebhookMessageStatus,
} from '../states.js';

/** What becomes of a row whose lease ran out (its holder died, froze or stalled past it). */
export type Expiry<S extends string = string> =
  /**
   * Any worker's housekeeping (takeBack, every few seconds) moves it to `waiting`, to be claimed
   * again, or, when it ran out on the last crash allowed, to `failed` with the error that says so.
   */
  | { readonly by: 'housekeeping'; readonly waiting: S; readonly failed: S }
  /**
   * The table's next claim takes it as it takes a free row (leaseFree). With `failed`, rows that ran
   * out on the last crash allowed are failed first (giveUpExpired, by whoever claims), never claimed.
   */
  | { readonly by: 'claim'; readonly failed?: S };

export interface LeasedTable<S extends string = string> {
  readonly table:
    | 'transfers'
    | 'job_objects'
    | 'jobs'
    | 'sends'
    | 'webhook_messages'
    | 'schedules'
    | 'periodic_tasks'
    | 'locations';
  /** The columns that name a row. */
  readonly keys: readonly string[];
  /** The column that names the holder (its owner id, src/engine/worker.ts workerId). */
  readonly owner: 'lease_owner' | 'refresh_lease_owner';
  /** The column that says when the lease ends unless renewed (epoch milliseconds). */
  readonly until: 'lease_expires_at' | 'refresh_lease_expires_at';
  /**
   * The states in which a row holds its lease (a claim's `to`): renewals, take-backs and hand-backs
   * touch only rows in them. Absent: the lease alone says (a schedule, a periodic task, a location).
   */
  readonly held?: readonly S[];
  /** The column a claim counts attempts in, which a hand-back takes back. */
  readonly attempts?: 'attempts' | 'planning_attempts';
  /**
   * How the claim counts crashes in `crashes`: at each claim (`each claim`, taken back by a settlement
   * that did not crash and by a hand-back), or only when it takes a row whose lease ran out (`lease ran
   * out`: the attempt that held it is the crash).
   */
  readonly crashes?: 'each claim' | 'lease ran out';
  readonly expired: Expiry<S>;
  /**
   * A row may have a lease end without a holder: nobody takes it before then (a job's planning after a
   * passing failure, heldOff). A row is free when its lease's end is unset or passed, whoever holds it.
   */
  readonly heldOff?: true;
  /** Columns that take the time of each take-back and hand-back (a table's updated_at). */
  readonly touched?: readonly string[];
  /** Columns that take the time of a give-up, which ends the row (finished_at). */
  readonly ended?: readonly string[];
}

/** A leased table whose rows are taken back by housekeeping, with its states. */
export interface Housekept<R extends string, W extends string, F extends string>
  extends LeasedTable<R | W | F> {
  readonly held: readonly [R];
  readonly expired: { readonly by: 'housekeeping'; readonly waiting: W; readonly failed: F };
}

const LEASE = { owner: 'lease_owner', until: 'lease_expires_at' } as const;

/** Single transfers: leased while running, by the worker that runs them. */
export const TRANSFERS = {
  table: 'transfers',
  keys: ['id'],
  ...LEASE,
  held: ['running'],
  attempts: 'attempts',
  crashes: 'each claim',
  expired: { by: 'housekeeping', waiting: 'queued', failed: 'failed' },
  touched: ['updated_at'],
  ended: ['finished_at'],
} as const satisfies Housekept<TransferStatus, TransferStatus, TransferStatus>;

/** A bulk job's objects: leased while running, by the worker that runs them. */
export const JOB_OBJECTS = {
  table: 'job_objects',
  keys: ['job_id', 'seq'],
  ...LEASE,
  held: ['running'],
  attempts: 'attempts',
  crashes: 'each claim',
  expired: { by: 'housekeeping', waiting: 'pending', failed: 'failed' },
} as const satisfies Housekept<ObjectStatus, ObjectStatus, ObjectStatus>;

/**
 * A job's planning: a lease on the job row that does not change its status, one planner at a time.
 * A planner whose process died is taken over by the next claim when its lease runs out (its crashes
 * not counted: docs/engine.md, "Crashes").
 */
export const JOBS = {
  table: 'jobs',
  keys: ['id'],
  ...LEASE,
  held: JOB_ACTIVE,
  attempts: 'planning_attempts',
  expired: { by: 'claim' },
  heldOff: true,
} as const satisfies LeasedTable;

/**
 * Sends: a claimed send stays queued, and its lease says a dispatcher holds it. The next claim takes a
 * send whose lease ran out, after failing those that ran out on the last crash allowed.
 */
export const SENDS = {
  table: 'sends',
  keys: ['id'],
  ...LEASE,
  held: ['queued'],
  attempts: 'attempts',
  crashes: 'each claim',
  expired: { by: 'claim', failed: 'failed' },
  touched: ['updated_at'],
} as const satisfies LeasedTable<SendStatus>;

/** Webhook messages: a claimed message stays pending; the claim that takes one whose lease ran out counts the crash. */
export const WEBHOOK_MESSAGES = {
  table: 'webhook_messages',
  keys: ['webhook_id', 'event_id'],
  ...LEASE,
  held: ['pending'],
  attempts: 'attempts',
  crashes: 'lease ran out',
  expired: { by: 'claim' },
} as const satisfies LeasedTable<WebhookMessageStatus>;

/** Schedules: one process at a time runs a due schedule (src/domain/schedules/runs.ts). */
export const SCHEDULES = {
  table: 'schedules',
  keys: ['id'],
  ...LEASE,
  expired: { by: 'claim' },
} as const satisfies LeasedTable;

/** Periodic tasks (src/queue/periodic.ts): one process at a time runs one. */
export const PERIODIC_TASKS = {
  table: 'periodic_tasks',
  keys: ['name'],
  ...LEASE,
  expired: { by: 'claim' },
} as const satisfies LeasedTable;

/** A location's token refresh: one refresh of a location at a time (src/lifecycle/location-health.ts). */
export const LOCATION_REFRESH = {
  table: 'locations',
  keys: ['id'],
  owner: 'refresh_lease_owner',
  until: 'refresh_lease_expires_at',
  expired: { by: 'claim' },
} as const satisfies LeasedTable;

/** Every leased table: what a process that exited held is found in these (leases.ts, endLeasesOf). */
export const LEASED: readonly LeasedTable[] = [
  JOB_OBJECTS,
  TRANSFERS,
  JOBS,
  SENDS,
  WEBHOOK_MESSAGES,
  SCHEDULES,
  PERIODIC_TASKS,
  LOCATION_REFRESH,
];
