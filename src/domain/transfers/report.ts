// Reports (docs/api.md, "Reports"): every object of a job, one line each, as NDJSON or CSV. The rows are
// read from the database a page at a time in `seq` order and each page is formatted before the next is
// read, so a report of 100,000 objects holds one page in memory, never the whole job; a reader that stops
// (the client went away) reads no further page.

import type { Kysely } from 'kysely';
import { proofView } from '../../api/views.js';
import type { Database, JobObjectRow, JobRow } from '../../db/schema.js';
import { type ObjectWork, workOf } from '../../lifecycle/specs.js';
import { VERDICTS } from '../../states.js';
import { csvRow } from '../../util/csv.js';

/** Rows read per query. */
export const REPORT_PAGE = 1000;

export const REPORT_OUTCOMES = [
  'copied',
  'moved',
  'removed',
  'pulled',
  /** A sync's deletion at the destination (docs/api.md, "Sync"). */
  'deleted',
  'restored',
  'skipped',
  'failed',
  'pending',
  'running',
  /** A verify's objects, by what it found (docs/api.md, "Verify"). */
  ...VERDICTS,
] as const;
export type ReportOutcome = (typeof REPORT_OUTCOMES)[number];

/** One object of a report, as an NDJSON line shows it. */
export interface ReportLine {
  key: string;
  outcome: ReportOutcome;
  /** The object's size, when known (listed, stat'ed or copied). */
  size: number | null;
  /** Bytes moved: the size once done, so far while running, 0 when skipped or removed. */
  bytes: number;
  attempts: number;
  /** Why it failed (or, pending, why its last attempt did). */
  error?: string;
  /** Why it was skipped. */
  reason?: string;
  /** The checksums its copy compared, `kind:value`, when both sides reported one kind. */
  source_hash?: string;
  destination_hash?: string;
  /**
   * How its written bytes were proven (docs/api.md, "Verification"): by a checksum, or by their size
   * alone; absent when it wrote none (skipped, removed, deleted, a provider's own move).
   */
  verified?: 'checksum' | 'size';
  /** With `verified: "checksum"`: the hash kinds that proved it, comma-separated (`md5`, `crc32c,md5`). */
  verified_by?: string;
}

/** The columns of the CSV form, in order (the header row). */
export const REPORT_COLUMNS = [
  'key',
  'outcome',
  'size',
  'bytes',
  'attempts',
  'error',
  'reason',
  'source_hash',
  'destination_hash',
  'verified',
  'verified_by',
] as const satisfies readonly (keyof ReportLine)[];

/** Why an object settled as skipped when its row says nothing: a bulk copy with overwrite if-missing. */
const SKIPPED_EXISTING = 'the destination object exists (overwrite: if-missing)';

type ReportRow = Pick<
  JobObjectRow,
  | 'job_id'
  | 'seq'
  | 'key'
  | 'status'
  | 'size'
  | 'work'
  | 'bytes_done'
  | 'attempts'
  | 'error'
  | 'source_hash'
  | 'destination_hash'
  | 'verified'
  | 'verdict'
>;

const DONE_BY_OP: Record<ObjectWork['op'], ReportOutcome> = {
  move: 'moved',
  remove: 'removed',
  pull: 'pulled',
  delete: 'deleted',
  // Never reached: a verify's object that succeeded has its verdict, which outcomeOf answers first.
  verify: 'copied',
  // An undo's objects (docs/api.md, "Undo").
  unwrite: 'removed',
  restore: 'restored',
};

/** What happened to an object: its status, and for a succeeded one, what its work was. */
export function outcomeOf(
  row: Pick<ReportRow, 'job_id' | 'seq' | 'status' | 'work' | 'verdict'>,
): ReportOutcome {
  if (row.status !== 'succeeded') return row.status;
  if (row.verdict !== null) return row.verdict;
  const work = workOf(row);
  return work === null ? 'copied' : (DONE_BY_OP[work.op] ?? 'copied');
}

export function reportLine(row: ReportRow): ReportLine {
  const outcome = outcomeOf(row);
  const line: ReportLine = {
    key: row.key,
    outcome,
    size: row.size === null ? null : Number(row.size),
    bytes: Number(row.bytes_done),
    attempts: Number(row.attempts),
  };
  if (outcome === 'skipped') line.reason = row.error ?? SKIPPED_EXISTING;
  else if (row.verdict !== null && row.status === 'succeeded') {
    // How a verify told it (docs/api.md, "Verify"): by size, by a checksum listed or read, and so on.
    if (row.error !== null) line.reason = row.error;
  } else if (row.error !== null && outcome !== 'running') line.error = row.error;
  if (row.source_hash !== null) line.source_hash = row.source_hash;
  if (row.destination_hash !== null) line.destination_hash = row.destination_hash;
  return { ...line, ...proofView(row.verified) };
}

export { csvCell, csvRow } from '../../util/csv.js';

export type ReportFormat = 'ndjson' | 'csv';

export class JobReports {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly pageSize: number = REPORT_PAGE,
  ) {}

  /** The job's objects in seq order, a page per query; stops reading when the caller stops iterating. */
  async *lines(job: Pick<JobRow, 'id'>): AsyncGenerator<ReportLine[]> {
    let after = -1;
    for (;;) {
      const rows = await this.db
        .selectFrom('job_objects')
        .select([
          'job_id',
          'seq',
          'key',
          'status',
          'size',
          'work',
          'bytes_done',
          'attempts',
          'error',
          'source_hash',
          'destination_hash',
          'verified',
          'verdict',
        ])
        .where('job_id', '=', job.id)
        .where('seq', '>', after)
        .orderBy('seq', 'asc')
        .limit(this.pageSize)
        .execute();
      if (rows.length === 0) return;
      yield rows.map(reportLine);
      if (rows.length < this.pageSize) return;
      after = Number(rows[rows.length - 1]?.seq);
    }
  }

  /**
   * The report as text chunks, one per page (the CSV's first chunk is its header row). `ended` is told,
   * once, how many lines were produced and whether that was all of them (false: the reader stopped).
   */
  async *text(
    job: Pick<JobRow, 'id'> | undefined,
    format: ReportFormat,
    ended?: (lines: number, complete: boolean) => void,
  ): AsyncGenerator<string> {
    let lines = 0;
    let complete = false;
    try {
      if (format === 'csv') yield csvRow(REPORT_COLUMNS);
      if (job !== undefined) {
        for await (const page of this.lines(job)) {
          lines += page.length;
          yield format === 'csv'
            ? page.map((line) => csvRow(REPORT_COLUMNS.map((column) => line[column]))).join('')
            : page.map((line) => `${JSON.stringify(line)}\n`).join('');
        }
      }
      complete = true;
    } finally {
      ended?.(lines, complete);
    }
  }
}
