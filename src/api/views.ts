// Rows as the API shows them (docs/api.md, "Polling"): a transfer and a job, built from their rows for
// the API's answers, the event stream and the webhook events alike, so each is written once.
import { toRfc3339 } from '../clock.js';
import type { JobRow, TransferRow } from '../db/schema.js';
import type { Given } from '../display.js';
import { transferGivenFrom, transferGivenTo } from '../durable/records.js';
import { jobDestination, jobOptions, jobSource, transferSpec } from '../durable/work.js';
import type { Counts, FilterSpec, Job, JobOptions, Transfer } from './transfers.js';

/** A jobs row's options (null: none). */
function optionsOf(row: JobRow): JobOptions {
  return row.options === null ? {} : jobOptions.decode(row.options, row.id);
}

/** A stored filter as the API shows it back (times in RFC 3339). */
function filterView(spec: FilterSpec): NonNullable<Job['filter']> {
  const { modified_after, modified_before, ...rest } = spec;
  return {
    ...rest,
    ...(modified_after === undefined ? {} : { modified_after: toRfc3339(modified_after) }),
    ...(modified_before === undefined ? {} : { modified_before: toRfc3339(modified_before) }),
  };
}

/**
 * How a row's written bytes were proven, as a report line and a single transfer show it (docs/api.md,
 * "Reports"): `checksum` with the kinds, or `size`. Nothing for a row that wrote none, or one written
 * before ferry kept it (null: unknown, never `size`).
 */
export function proofView(verified: string | null): Pick<Transfer, 'verified' | 'verified_by'> {
  if (verified === null) return {};
  if (verified === 'size') return { verified: 'size' };
  return { verified: 'checksum', verified_by: verified };
}

function times(row: {
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
}) {
  return {
    created_at: toRfc3339(row.created_at),
    updated_at: toRfc3339(row.updated_at),
    ...(row.started_at === null ? {} : { started_at: toRfc3339(row.started_at) }),
    ...(row.finished_at === null ? {} : { finished_at: toRfc3339(row.finished_at) }),
  };
}

/**
 * A job's counters as the API shows them, wherever it shows a job (the resource, the lists, the event
 * stream, the webhook events, a transfer over several objects, a schedule's runs): `deleted` on every
 * kind, so that done = total - pending holds for a client with no case per kind.
 */
export function countsOf(row: Pick<JobRow, CountColumns>): Counts {
  const counts: Counts = {
    total: Number(row.objects_total),
    pending: Number(row.objects_pending),
    succeeded: Number(row.objects_succeeded),
    skipped: Number(row.objects_skipped),
    failed: Number(row.objects_failed),
    deleted: Number(row.objects_deleted),
    size_only: Number(row.objects_size_only),
  };
  // A verify's findings (docs/api.md, "Verify"): on that kind only, so other jobs' counts keep their shape.
  if (row.kind !== 'verify') return counts;
  return {
    ...counts,
    equal: Number(row.objects_equal),
    differ: Number(row.objects_differ),
    missing_in_destination: Number(row.objects_missing_in_destination),
    missing_in_source: Number(row.objects_missing_in_source),
  };
}

/**
 * A transfer as the API shows it; with its job (a transfer over several objects), the job's counts,
 * and while it runs, the bytes of its finished and running objects.
 */
/**
 * A move's or remove's backup as given (docs/api.md, "Undo"), kept in its spec. Only a spec that names
 * one is parsed, and a spec that cannot be read (the worker fails such a transfer) shows none: a view
 * never fails on what the worker reports as the transfer's error.
 */
function backupGiven(row: TransferRow): string | undefined {
  if ((row.kind !== 'move' && row.kind !== 'remove') || !row.spec.includes('"backup_to"')) return undefined;
  try {
    const spec = transferSpec.decode(row.spec, row.id);
    return (spec.kind === 'move' || spec.kind === 'remove') && typeof spec.backup_to === 'string'
      ? spec.backup_to
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A transfer's from or to as given. One that cannot be read (written by a version that kept another
 * shape) is left out, as for transfers accepted before ferry kept them: the view shows the rest.
 */
function givenOf(codec: typeof transferGivenFrom, text: string | null, row: TransferRow): Given | undefined {
  if (text === null) return undefined;
  try {
    return codec.decode(text, row.id);
  } catch {
    return undefined;
  }
}

export function transferView(row: TransferRow, job?: { row: JobRow; runningBytes: number }): Transfer {
  const from = givenOf(transferGivenFrom, row.given_from, row);
  const to = givenOf(transferGivenTo, row.given_to, row);
  const view: Transfer = {
    id: row.id,
    kind: row.kind,
    status: row.status,
    ...(from === undefined ? {} : { from }),
    ...(to === undefined ? {} : { to }),
    ...times(row),
    ...(row.bytes_total === null ? {} : { bytes_total: row.bytes_total }),
    bytes_done: row.bytes_done,
    ...(row.error === null ? {} : { error: row.error }),
    ...(row.bandwidth_limit === null ? {} : { bandwidth_limit: Number(row.bandwidth_limit) }),
    ...proofView(row.verified),
  };
  const backupTo = backupGiven(row);
  if (backupTo !== undefined) view.backup_to = backupTo;
  if (job === undefined) return view;
  view.counts = countsOf(job.row);
  if (row.status === 'running') view.bytes_done = Number(job.row.bytes_finished) + job.runningBytes;
  return view;
}

/** A job's source or destination (src/durable/work.ts, ObjectRef), of which the API shows the id and path. */
function refOf(ref: { location_id: string; path: string }): Job['from'] {
  return { id: ref.location_id, path: ref.path };
}

/** A job as the API shows it: its counters, and `runningBytes`, the bytes of the objects running now. */
export function jobView(row: JobRow, runningBytes: number): Job {
  const options = optionsOf(row);
  return {
    job_id: row.id,
    kind: row.kind,
    status: row.status,
    from: refOf(jobSource.decode(row.source, row.id)),
    to: refOf(jobDestination.decode(row.destination, row.id)),
    overwrite: row.overwrite,
    ...(options.filter === undefined ? {} : { filter: filterView(options.filter) }),
    ...(options.compare === undefined ? {} : { compare: options.compare }),
    ...(options.delete === undefined ? {} : { delete: options.delete }),
    ...(options.max_delete === undefined ? {} : { max_delete: options.max_delete }),
    ...(options.mode === undefined ? {} : { mode: options.mode }),
    ...times(row),
    counts: countsOf(row),
    bytes_done: Number(row.bytes_finished) + runningBytes,
    ...(row.error === null ? {} : { error: row.error }),
    ...(row.plan_id === null ? {} : { plan_id: row.plan_id }),
    ...(row.bandwidth_limit === null ? {} : { bandwidth_limit: Number(row.bandwidth_limit) }),
    ...(row.schedule_id === null ? {} : { schedule_id: row.schedule_id }),
    ...(options.backup_to === undefined ? {} : { backup_to: options.backup_to }),
    ...(row.undo_of === null ? {} : { undo_of: row.undo_of }),
  };
}

/** The job columns a job's counts are read from (countsOf). */
export type CountColumns =
  | 'objects_total'
  | 'objects_pending'
  | 'objects_succeeded'
  | 'objects_skipped'
  | 'objects_failed'
  | 'objects_deleted'
  | 'objects_size_only'
  | 'kind'
  | 'objects_equal'
  | 'objects_differ'
  | 'objects_missing_in_destination'
  | 'objects_missing_in_source';
