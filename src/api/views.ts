// Rows as the API shows them (docs/api.md, "Polling"): a transfer and a job, built from their rows for
// the API's answers, the event stream and the webhook events alike, so each is written once.
import { toRfc3339 } from '../clock.js';
import type { JobRow, TransferRow } from '../db/schema.js';
import type { Given } from '../display.js';
import type { Counts, Job, Transfer } from './transfers.js';

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

function countsOf(row: JobRow): Counts {
  return {
    total: Number(row.objects_total),
    pending: Number(row.objects_pending),
    succeeded: Number(row.objects_succeeded),
    skipped: Number(row.objects_skipped),
    failed: Number(row.objects_failed),
  };
}

/**
 * A transfer as the API shows it; with its job (a transfer over several objects), the job's counts,
 * and while it runs, the bytes of its finished and running objects.
 */
export function transferView(row: TransferRow, job?: { row: JobRow; runningBytes: number }): Transfer {
  const view: Transfer = {
    id: row.id,
    kind: row.kind,
    status: row.status,
    ...(row.given_from === null ? {} : { from: JSON.parse(row.given_from) as Given }),
    ...(row.given_to === null ? {} : { to: JSON.parse(row.given_to) as Given }),
    ...times(row),
    ...(row.bytes_total === null ? {} : { bytes_total: row.bytes_total }),
    bytes_done: row.bytes_done,
    ...(row.error === null ? {} : { error: row.error }),
  };
  if (job === undefined) return view;
  view.counts = countsOf(job.row);
  if (row.status === 'running') view.bytes_done = Number(job.row.bytes_finished) + job.runningBytes;
  return view;
}

/**
 * A job's source or destination column: the location's id and the path (the ObjectRef of
 * src/engine/specs.ts, of which the API shows these two fields).
 */
function refOf(text: string): Job['from'] {
  const ref = JSON.parse(text) as { location_id: string; path: string };
  return { id: ref.location_id, path: ref.path };
}

/** A job as the API shows it: its counters, and `runningBytes`, the bytes of the objects running now. */
export function jobView(row: JobRow, runningBytes: number): Job {
  return {
    job_id: row.id,
    status: row.status,
    from: refOf(row.source),
    to: refOf(row.destination),
    overwrite: row.overwrite,
    ...times(row),
    counts: countsOf(row),
    bytes_done: Number(row.bytes_finished) + runningBytes,
    ...(row.error === null ? {} : { error: row.error }),
    ...(row.schedule_id === null ? {} : { schedule_id: row.schedule_id }),
  };
}
