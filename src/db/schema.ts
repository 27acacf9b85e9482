// Table types for Kysely. Times are epoch milliseconds (BIGINT on PostgreSQL, INTEGER on SQLite) and
// booleans are 0/1 integers, so that both databases return the same JavaScript values.
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { Provider } from '../providers.js';
import type {
  JobKind,
  JobStatus,
  LocationStatus,
  ObjectStatus,
  Overwrite,
  SendStatus,
  TransferKind,
  TransferStatus,
  Verdict,
  WebhookMessageStatus,
  WebhookStatus,
} from '../states.js';

export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: number;
  /** Changes whenever a location of the workspace changes (kept by triggers). */
  locations_version: Generated<number>;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  /** SHA-256 of the bearer token, hex. The token itself is never stored. */
  token_hash: string;
  created_at: number;
  updated_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
  /** JSON array of the key's scopes (docs/api.md, "Scopes"); null: all of them. Never changes. */
  scopes: string | null;
  /** JSON array of the location ids the key may address (docs/api.md, "Scopes"); null: all. Never changes. */
  locations: string | null;
}

/**
 * The locations a piece of work touches, as ",id,id," (src/domain/caller.ts): written with the work,
 * always (an insert must give it); null only on a schedule whose label named nothing at the upgrade.
 */
export type LocationIds = ColumnType<string | null, string, string>;

export interface LocationsTable {
  id: string;
  workspace_id: string;
  provider: Provider;
  label: string;
  /** JSON object text, or null when empty. */
  metadata: string | null;
  /** The sealed secret (src/crypto/envelope.ts). */
  secret_envelope: string;
  status: LocationStatus;
  validation_error: string | null;
  access_token_expires_at: number | null;
  refresh_requested: Generated<number>;
  consecutive_refresh_failures: Generated<number>;
  last_refresh_attempt_at: number | null;
  failure_reason: string | null;
  last_refresh_error: string | null;
  /** The refresher's lease: which process refreshes the token now, and until when. */
  refresh_lease_owner: string | null;
  refresh_lease_expires_at: number | null;
  /** After a passing refresh failure: not tried again on its own before this time. */
  refresh_after: Generated<number>;
  /** Moved by a replaced secret only (not by a refreshed token): open stores compare it. */
  secret_version: Generated<number>;
  created_at: number;
  updated_at: number;
}

/** The columns of a row a queue claims with a lease (src/queue/claim.ts, src/queue/leases.ts). */
interface LeasedColumns {
  attempts: Generated<number>;
  /**
   * Claims that ended without a settlement (the worker crashed on the row, or its process died holding
   * the lease): counted at the claim, uncounted when the attempt settles or is handed back.
   */
  crashes: Generated<number>;
  lease_owner: string | null;
  lease_expires_at: number | null;
}

export interface TransfersTable extends LeasedColumns {
  id: string;
  workspace_id: string;
  location_ids: LocationIds;
  kind: TransferKind;
  status: TransferStatus;
  /** JSON of the transfer's request, resolved to location ids (src/lifecycle/specs.ts). */
  spec: string;
  /** JSON of `from` as the caller gave it (docs/api.md, "Polling"); null on rows from before it was kept. */
  given_from: string | null;
  /** JSON of `to` as given; null for a remove (and on rows from before it was kept). */
  given_to: string | null;
  bytes_total: number | null;
  bytes_done: Generated<number>;
  error: string | null;
  /** A single copy's cap in bytes per second (docs/api.md, "Bandwidth"); null for none. */
  bandwidth_limit: Generated<number | null>;
  /**
   * How the bytes a single transfer wrote were proven (docs/api.md, "Verification"), as a job object
   * keeps it: `size`, or the hash kinds that proved them, comma-separated. Null when it wrote none, or
   * ended before ferry kept it (unknown). A transfer over several objects keeps it on its objects.
   */
  verified: Generated<string | null>;
  /** Not claimed before this time (backoff). */
  run_after: Generated<number>;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
}

export interface JobsTable {
  id: string;
  workspace_id: string;
  location_ids: LocationIds;
  status: JobStatus;
  /** JSON {location_id, path} of the source prefix. */
  source: string;
  destination: string;
  overwrite: Overwrite;
  /** The job's cap in bytes per second over all its objects (docs/api.md, "Bandwidth"); null for none. */
  bandwidth_limit: Generated<number | null>;
  has_manifest: Generated<number>;
  planning_done: Generated<number>;
  planned_count: Generated<number>;
  planning_attempts: Generated<number>;
  /** The transfer over several objects this job runs (docs/engine.md); null for a bulk copy or sync. */
  transfer_id: Generated<string | null>;
  /** The plan this job runs (docs/api.md, "Plans"); null for a job that was not planned ahead. */
  plan_id: Generated<string | null>;
  /** The schedule whose run started this job (docs/api.md, "Schedules"); null otherwise. */
  schedule_id: Generated<string | null>;
  /**
   * Object counts and finished bytes, kept by the object lifecycle in the same transaction as each
   * object's move (src/lifecycle/job-counters.ts): pending includes running.
   */
  objects_total: Generated<number>;
  objects_pending: Generated<number>;
  objects_succeeded: Generated<number>;
  objects_skipped: Generated<number>;
  objects_failed: Generated<number>;
  bytes_finished: Generated<number>;
  /** What the job is (docs/api.md, "Sync"): a bulk copy or a sync. */
  kind: Generated<JobKind>;
  /** JSON of the options it was given (src/lifecycle/specs.ts, JobOptions); null: none. */
  options: Generated<string | null>;
  /** Objects a sync deleted at its destination (succeeded deletions; not in objects_succeeded). */
  objects_deleted: Generated<number>;
  /** A sync's deletions held back (pending, never due) until its copies have settled. */
  objects_held: Generated<number>;
  /** Objects written whose bytes no hash could prove, only their size (docs/api.md, "Verification"). */
  objects_size_only: Generated<number>;
  /** A verify's objects by what it found (docs/api.md, "Verify"); 0 on every other kind. */
  objects_equal: Generated<number>;
  objects_differ: Generated<number>;
  objects_missing_in_destination: Generated<number>;
  objects_missing_in_source: Generated<number>;
  /** The job an undo job puts back (docs/api.md, "Undo"); null for every other kind. */
  undo_of: Generated<string | null>;
  error: string | null;
  /** The planner's lease; with no owner, a time before which planning is not retried. */
  lease_owner: string | null;
  lease_expires_at: number | null;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
}

export interface JobManifestsTable {
  job_id: string;
  /** JSON array of keys relative to the source prefix. */
  keys: string;
}

export interface JobObjectsTable extends LeasedColumns {
  job_id: string;
  seq: number;
  key: string;
  key_hash: string;
  status: ObjectStatus;
  size: number | null;
  /** The source's ETag as its listing reported it; null for manifest keys and stores without one. */
  source_etag: string | null;
  /**
   * JSON of the hashes the source's listing reported for the object (kind → lower-case hex), which its
   * first attempt checks the bytes it reads against (docs/api.md, "Verification"); null when the
   * listing gave none, for manifest keys, a plan's objects, and rows planned before ferry kept them.
   */
  source_hashes: Generated<string | null>;
  /**
   * JSON of the object's own work (src/lifecycle/specs.ts, ObjectWork) when its job runs a
   * transfer over several objects; null for a bulk copy's object, which copies source prefix + key.
   */
  work: Generated<string | null>;
  bytes_done: Generated<number>;
  error: string | null;
  last_attempt_at: number | null;
  run_after: Generated<number>;
  /**
   * The checksums a copy compared, as `kind:value`, written when it settles as copied; null when no
   * hash kind was reported by both sides (docs/api.md, "Reports").
   */
  source_hash: Generated<string | null>;
  destination_hash: Generated<string | null>;
  /**
   * How its written bytes were proven (docs/api.md, "Verification"): `size`, or the hash kinds that
   * proved them, comma-separated; null when it wrote none (skipped, removed, deleted, a native move).
   */
  verified: Generated<string | null>;
  /** What a verify found for the key (docs/api.md, "Verify"); null on other jobs and while pending. */
  verdict: Generated<Verdict | null>;
  /**
   * JSON of what the object's work did at its destination, for an undo (src/engine/backup.ts, Touched):
   * created, replaced or deleted an object, where the replaced one was kept, and what was written.
   * Null when it changed nothing there (skipped, failed) or ran before ferry kept it.
   */
  touched: Generated<string | null>;
}

/** A dry run's plan (docs/api.md, "Plans"): the request resolved to location ids, run at most once. */
export interface PlansTable {
  id: string;
  workspace_id: string;
  location_ids: LocationIds;
  /** What the plan runs: copy, move or remove (src/lifecycle/plans.ts, PLAN_KINDS). */
  kind: string;
  /** JSON of the request resolved to location ids (src/lifecycle/plans.ts, PlanRequest). */
  request: string;
  /** JSON of the request's from and to as given (the transfer's `from` and `to`). */
  given: string;
  /** JSON {action: count}; null while the dry run is still writing entries. */
  counts: string | null;
  total: Generated<number>;
  created_at: number;
  expires_at: number;
  ran_at: number | null;
  job_id: string | null;
  transfer_id: string | null;
}

/** One object of a plan, in listing order. */
export interface PlanEntriesTable {
  plan_id: string;
  seq: number;
  /** As a job object's key: relative to the copy's source prefix, or the source's path. */
  key: string;
  size: number | null;
  etag: string | null;
  /** What the run does with it: copy, move, remove (sync adds skip and delete). */
  action: string;
  /** JSON of the object's own work (src/lifecycle/specs.ts, ObjectWork); null for a copy's object. */
  work: string | null;
}

/** One accepted request of a rate-limited bucket, kept until its window has passed. */
export interface RateAcceptsTable {
  workspace_id: string;
  bucket: string;
  accepted_at: number;
  expires_at: number;
}

export interface SharesTable {
  id: string;
  workspace_id: string;
  location_id: string;
  /** The file's path in the location, as resolved when the share was made. */
  path: string;
  /** `<location label>/<path>` as resolved when the share was made, for lists. */
  source: string;
  /** SHA-256 of the link's token, hex. The token itself is never stored. */
  token_hash: string;
  /** argon2id hash of the password, or null for none. */
  password_hash: string | null;
  expires_at: number | null;
  max_downloads: number | null;
  downloads: Generated<number>;
  last_download_at: number | null;
  revoked_at: number | null;
  created_at: number;
}

export interface ShareGrantsTable {
  /** SHA-256 of the cookie a correct password sets, hex. */
  token_hash: string;
  share_id: string;
  expires_at: number;
}

/** One recorded action (docs/api.md, "Audit log"; src/domain/audit/audit.ts). */
export interface AuditEventsTable {
  id: string;
  /** Null for a refused authentication, which has no workspace. */
  workspace_id: string | null;
  at: number;
  /** e.g. `location.create`, `copy`, `share.download`, `auth.refused` (the list is in docs/api.md). */
  action: string;
  /** What it acted on: an id, or `<location label>/<path>`; never a secret or a body. */
  target: string | null;
  /** The HTTP status answered. */
  status: number;
  key_id: string | null;
  ip: string;
  user_agent: string | null;
}

/** One counted download of a share link (docs/api.md, "Share links": the access log). */
export interface ShareAccessesTable {
  id: string;
  share_id: string;
  at: number;
  ip: string;
  /** 200 or 206. */
  status: number;
  /** Bytes written to the connection, set when the answer ends. */
  bytes: Generated<number>;
  /** 1 once the whole answer was written; 0 while it runs, or when it was cut. */
  completed: Generated<number>;
  ended_at: number | null;
}

export interface ShareDownloadsTable {
  share_id: string;
  /** The client address a counted download of a link with a download limit came from. */
  client: string;
  at: number;
}

export interface ShareGuessesTable {
  /** Set on every attempt since 2026-11-25, so that a right password can take its record back. */
  id: string | null;
  share_id: string;
  /** The client address a password attempt came from. */
  client: string;
  at: number;
}

export interface SendsTable extends LeasedColumns {
  id: string;
  workspace_id: string;
  /** The name the mail goes out under; null: the workspace's name. */
  sender_name: string | null;
  location_id: string;
  path: string;
  file_name: string;
  file_size: number;
  /** JSON {to, cc, bcc, replyTo}: arrays of addresses. */
  recipients: string;
  /** to + cc + bcc, for the hourly limit. */
  recipient_count: number;
  message: string | null;
  /** argon2id hash of the link's password, or null. */
  password_hash: string | null;
  link_expires_at: number | null;
  status: SendStatus;
  scheduled_at: number | null;
  sent_at: number | null;
  error: string | null;
  /** JSON array of the addresses the SMTP server refused. */
  refused: string | null;
  /** Not delivered before this time (the schedule, then backoff). */
  run_after: number;
  created_at: number;
  updated_at: number;
}

/** Where a streamed copy's multipart upload stands (src/engine/checkpoints.ts). */
export interface CopyCheckpointsTable {
  /** The work running the copy: "object:<job id>:<seq>" or "transfer:<id>". */
  work: string;
  /** The lease holder that recorded or last took over the upload. */
  lease_owner: string;
  destination_path: string;
  /** The source version being copied; another one starts the upload over. */
  source_etag: string;
  size: number;
  upload_id: string;
  part_size: number;
  created_at: number;
}

/** One part of a checkpointed upload, written as the provider acknowledges it. */
export interface CopyCheckpointPartsTable {
  work: string;
  part_index: number;
  /** S3's ETag of the part, or Azure's block id. */
  tag: string;
  size: number;
}

/** A webhook endpoint of a workspace (src/domain/webhooks/). */
export interface WebhooksTable {
  id: string;
  workspace_id: string;
  url: string;
  /** The subscribed event types as ",a,b,": one LIKE finds an event's endpoints. */
  events: string;
  /** The sealed signing secret (src/crypto/envelope.ts), bound to the webhook id. */
  secret_envelope: string;
  status: WebhookStatus;
  disabled_reason: string | null;
  disabled_at: number | null;
  /** The first failed attempt since the last delivered one; null while deliveries succeed. */
  failing_since: number | null;
  created_at: number;
  updated_at: number;
}

/** One event to deliver to one endpoint: the outbox, claimed with a lease. */
export interface WebhookMessagesTable {
  webhook_id: string;
  /** The `webhook-id` header: the same for every attempt and every endpoint of the event. */
  event_id: string;
  type: string;
  /** The JSON body, fixed when the event happens, so every attempt signs the same bytes. */
  payload: string;
  status: WebhookMessageStatus;
  attempts: Generated<number>;
  /** Attempts that crashed (an exception in ferry, or a process that died holding the lease). */
  crashes: Generated<number>;
  run_after: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

/** One delivery attempt, for GET /v1/webhooks/{id}/deliveries. */
export interface WebhookAttemptsTable {
  id: string;
  webhook_id: string;
  event_id: string;
  type: string;
  attempt: number;
  status_code: number | null;
  /** The class of a failure without an HTTP answer (timeout, connection, refused), or null. */
  error: string | null;
  duration_ms: number;
  created_at: number;
}

/** A task that runs now and then in one worker process at a time (src/queue/periodic.ts). */
export interface PeriodicTasksTable {
  name: string;
  /** Not run again before this time. */
  run_after: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  last_run_at: number | null;
}

/** A recurring copy or sync (docs/api.md, "Schedules"), claimed with a lease when due. */
export interface SchedulesTable {
  id: string;
  workspace_id: string;
  location_ids: LocationIds;
  /** JSON array of the locations of the key that gave the action; null: all (src/domain/caller.ts). */
  caller_locations: string | null;
  name: string;
  /** As given: a cron expression or words. */
  every: string;
  /** The five-field cron expression `every` reads as. */
  cron: string;
  timezone: string;
  /** JSON {"copy": {...}} or {"sync": {...}}. */
  action: string;
  paused: number;
  /** Null while paused. */
  next_run_at: number | null;
  last_run_at: number | null;
  last_job_id: string | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

/** One run of a schedule: at most one per due time. */
export interface ScheduleRunsTable {
  id: string;
  schedule_id: string;
  due_at: number;
  ran_at: number;
  outcome: 'starting' | 'started' | 'skipped_overlap' | 'failed';
  job_id: string | null;
  reason: string | null;
}

export interface Database {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  locations: LocationsTable;
  transfers: TransfersTable;
  jobs: JobsTable;
  job_manifests: JobManifestsTable;
  job_objects: JobObjectsTable;
  rate_accepts: RateAcceptsTable;
  shares: SharesTable;
  share_grants: ShareGrantsTable;
  share_guesses: ShareGuessesTable;
  share_downloads: ShareDownloadsTable;
  share_accesses: ShareAccessesTable;
  sends: SendsTable;
  copy_checkpoints: CopyCheckpointsTable;
  copy_checkpoint_parts: CopyCheckpointPartsTable;
  webhooks: WebhooksTable;
  webhook_messages: WebhookMessagesTable;
  webhook_attempts: WebhookAttemptsTable;
  periodic_tasks: PeriodicTasksTable;
  plans: PlansTable;
  audit_events: AuditEventsTable;
  plan_entries: PlanEntriesTable;
  bandwidth_buckets: BandwidthBucketsTable;
  schedules: SchedulesTable;
  schedule_runs: ScheduleRunsTable;
}

/** A bandwidth cap's token bucket shared by every process (src/engine/bandwidth.ts). */
export interface BandwidthBucketsTable {
  /** `job:<id>`, `transfer:<id>` or `workspace:<id>`. */
  key: string;
  /** Bytes that may pass now; negative when slices were granted ahead of time. */
  tokens: number;
  /** When `tokens` was last worked out (ms). */
  at: number;
}

export type ScheduleRow = Selectable<SchedulesTable>;
export type ScheduleRunRow = Selectable<ScheduleRunsTable>;

export type WebhookRow = Selectable<WebhooksTable>;
export type WebhookMessageRow = Selectable<WebhookMessagesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;

export type SendRow = Selectable<SendsTable>;

export type ShareRow = Selectable<SharesTable>;

export type TransferRow = Selectable<TransfersTable>;
export type JobRow = Selectable<JobsTable>;
export type PlanRow = Selectable<PlansTable>;
export type JobObjectRow = Selectable<JobObjectsTable>;

export type WorkspaceRow = Selectable<WorkspacesTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKey = Insertable<ApiKeysTable>;
export type LocationRow = Selectable<LocationsTable>;
export type NewLocation = Insertable<LocationsTable>;
export type LocationUpdate = Updateable<LocationsTable>;
