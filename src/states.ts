// Every state a transfer, job, job object, send or location can be in, and the other closed sets of
// values the database stores as text, declared once. The database row types (src/db/schema.ts) and
// the API's schemas (src/http/) both derive from these lists, so a value cannot be added to one and
// forgotten in the other. Which moves between states are allowed is written in the module that owns
// each lifecycle, all in src/lifecycle/ (transfers, jobs and their objects, sends, webhooks, location
// health); docs/engine.md draws them all, test/engine/lifecycle.test.ts checks the drawings and that
// no one else writes).

export const TRANSFER_KINDS = ['copy', 'move', 'pull', 'remove'] as const;
export type TransferKind = (typeof TRANSFER_KINDS)[number];

export const TRANSFER_STATES = ['queued', 'running', 'complete', 'failed'] as const;
export type TransferStatus = (typeof TRANSFER_STATES)[number];

/** The states a transfer ends in (a retry of a failed one queues it again). */
export const TRANSFER_FINISHED = ['complete', 'failed'] as const satisfies readonly TransferStatus[];

export const JOB_STATES = ['planning', 'running', 'complete', 'partial', 'failed', 'canceled'] as const;
export type JobStatus = (typeof JOB_STATES)[number];

/** The states a job ends in (a retry of a partial or failed one plans it again). */
export const JOB_FINISHED = [
  'complete',
  'partial',
  'failed',
  'canceled',
] as const satisfies readonly JobStatus[];
export type FinishedJobStatus = (typeof JOB_FINISHED)[number];

/** The states of a job still at work: every state but those it ends in. */
export const JOB_ACTIVE = JOB_STATES.filter(
  (s): s is Exclude<JobStatus, FinishedJobStatus> => !(JOB_FINISHED as readonly JobStatus[]).includes(s),
);

/** Whether a job in `status` has ended. */
export function isFinishedJob(status: JobStatus): status is FinishedJobStatus {
  return (JOB_FINISHED as readonly JobStatus[]).includes(status);
}

/** Whether a job or a transfer in `status` has ended: the one test the CLI and the console make. */
export function hasFinished(kind: 'job' | 'transfer', status: string): boolean {
  const finished: readonly string[] = kind === 'job' ? JOB_FINISHED : TRANSFER_FINISHED;
  return finished.includes(status);
}

/**
 * A bulk job copies a prefix, syncs one to another (docs/api.md, "Sync"), verifies that two hold the
 * same objects, changing nothing (docs/api.md, "Verify"), or undoes a finished job: puts back what it
 * changed (docs/api.md, "Undo").
 */
export const JOB_KINDS = ['copy', 'sync', 'verify', 'undo'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/**
 * How a verify tells two objects apart (docs/api.md, "Verify"): by a hash both sides report, reading the
 * bytes where they report none in common (checksum); by reading and hashing both sides (download); by
 * their sizes alone (size).
 */
export const VERIFY_MODES = ['checksum', 'download', 'size'] as const;
export type VerifyMode = (typeof VERIFY_MODES)[number];

/** What a verify found for one key (docs/api.md, "Verify"), each counted on its job. */
export const VERDICTS = ['equal', 'differ', 'missing_in_destination', 'missing_in_source'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** How a sync tells that a destination object already holds the source's (docs/api.md, "Sync"). */
export const COMPARE_MODES = ['size-modtime', 'checksum', 'size'] as const;
export type CompareMode = (typeof COMPARE_MODES)[number];

export const OBJECT_STATES = ['pending', 'running', 'succeeded', 'skipped', 'failed'] as const;
export type ObjectStatus = (typeof OBJECT_STATES)[number];

/** `always` replaces an existing destination object, `if-missing` leaves it alone (docs/api.md, "Copy"). */
export const OVERWRITE_MODES = ['always', 'if-missing'] as const;
export type Overwrite = (typeof OVERWRITE_MODES)[number];

export const SEND_STATES = ['scheduled', 'queued', 'sent', 'failed', 'canceled'] as const;
export type SendStatus = (typeof SEND_STATES)[number];

/** A share link's state in lists (docs/api.md, "Share links"). */
export const SHARE_STATES = ['active', 'expired', 'used_up', 'revoked'] as const;
export type ShareState = (typeof SHARE_STATES)[number];

export const LOCATION_STATES = ['active', 'failed', 'needs_attention'] as const;
export type LocationStatus = (typeof LOCATION_STATES)[number];

export const WEBHOOK_STATES = ['enabled', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATES)[number];

/** A webhook message waits (pending), was answered 2xx (delivered), or gave up after a day (failed). */
export const WEBHOOK_MESSAGE_STATES = ['pending', 'delivered', 'failed'] as const;
export type WebhookMessageStatus = (typeof WEBHOOK_MESSAGE_STATES)[number];

/** What became of a schedule's run (docs/api.md, "Schedules"). */
export const SCHEDULE_RUN_OUTCOMES = ['started', 'skipped_overlap', 'failed'] as const;
export type ScheduleRunOutcome = (typeof SCHEDULE_RUN_OUTCOMES)[number];
