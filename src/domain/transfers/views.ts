// Polling (docs/api.md, "Polling"): the transfer and job resources, their lists (newest
// first, paged by an opaque cursor) and a job's failures (paged by object sequence).
import { type Kysely, type Selectable, sql } from 'kysely';
import { toRfc3339 } from '../../clock.js';
import type { Database, JobRow, TransferRow } from '../../db/schema.js';
import type { Given } from '../../display.js';
import * as objects from '../../engine/lifecycle/objects.js';
import { decodeRef } from '../../engine/specs.js';
import { invalid, notFound } from '../../errors.js';
import { isUuid } from '../../ids.js';
import type { JobStatus, Overwrite, TransferKind, TransferStatus } from '../../states.js';

export interface TransferView {
  id: string;
  kind: TransferKind;
  status: TransferStatus;
  from?: Given;
  to?: Given;
  created_at: string;
  updated_at: string;
  started_at?: string;
  finished_at?: string;
  bytes_total?: number;
  bytes_done: number;
  error?: string;
  /** A transfer over several objects: its job's counts (docs/api.md, "Polling"). */
  counts?: JobCounts;
}

export interface JobCounts {
  total: number;
  pending: number;
  succeeded: number;
  skipped: number;
  failed: number;
}

export interface JobView {
  job_id: string;
  status: JobStatus;
  from: { id: string; path: string };
  to: { id: string; path: string };
  overwrite: Overwrite;
  created_at: string;
  updated_at: string;
  started_at?: string;
  finished_at?: string;
  counts: JobCounts;
  bytes_done: number;
  error?: string;
}

export interface Page<T> {
  items: T[];
  next_cursor?: string;
}

export const PAGE_DEFAULT = 100;
export const PAGE_MAX = 1000;

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

function countsOf(row: JobRow): JobCounts {
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
export function transferView(row: TransferRow, job?: { row: JobRow; runningBytes: number }): TransferView {
  const view: TransferView = {
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

export function parseLimit(limit: string | undefined): number {
  if (limit === undefined) return PAGE_DEFAULT;
  const n = Number(limit);
  if (!Number.isInteger(n) || n < 1 || n > PAGE_MAX)
    throw invalid(`limit must be a whole number from 1 to ${PAGE_MAX}`);
  return n;
}

/** Cursor for newest-first lists: the last item's creation time and id. */
function encodeCursor(createdAt: number, id: string): string {
  return Buffer.from(`${createdAt}:${id}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: number; id: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const colon = text.indexOf(':');
  const createdAt = Number(text.slice(0, colon));
  const id = text.slice(colon + 1);
  if (colon < 1 || !Number.isInteger(createdAt) || !isUuid(id)) throw invalid('cursor is not valid');
  return { createdAt, id };
}

/** Rows after the cursor in newest-first order: created_at descending, then id ascending for ties. */
function afterCursor(cursor: string | undefined) {
  if (cursor === undefined) return sql<boolean>`1 = 1`;
  const after = decodeCursor(cursor);
  return sql<boolean>`(created_at < ${after.createdAt} or (created_at = ${after.createdAt} and id > ${after.id}))`;
}

/** The page and, when more rows follow, the cursor of its last row (rows were read with limit + 1). */
function pageOf<R extends { created_at: number; id: string }>(
  rows: R[],
  limit: number,
): { rows: R[]; next_cursor?: string } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    rows: page,
    ...(rows.length > limit && last ? { next_cursor: encodeCursor(last.created_at, last.id) } : {}),
  };
}

/** The tables listed newest first per workspace (transfers, jobs, shares). */
type Listed = 'transfers' | 'jobs' | 'shares' | 'sends';

/** One page of a workspace's rows of `table`, newest first, after `cursor`. */
export async function newestFirst<T extends Listed>(
  db: Kysely<Database>,
  table: T,
  workspaceId: string,
  limit: number,
  cursor: string | undefined,
): Promise<{ rows: Selectable<Database[T]>[]; next_cursor?: string }> {
  // One query for the three tables: they share the columns it reads (workspace_id, created_at, id).
  const rows = await db
    .selectFrom(table as Listed as 'transfers')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where(afterCursor(cursor))
    // A transfer's job is listed as the transfer (GET /v1/transfers), not as a job.
    .where(table === 'jobs' ? sql<boolean>`transfer_id is null` : sql<boolean>`1 = 1`)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'asc')
    .limit(limit + 1)
    .execute();
  return pageOf(
    rows as unknown as Array<Selectable<Database[T]> & { created_at: number; id: string }>,
    limit,
  );
}

export class TransferViews {
  constructor(private readonly db: Kysely<Database>) {}

  async transfer(workspaceId: string, id: string): Promise<TransferView> {
    return this.viewOf(await this.findTransfer(workspaceId, id));
  }

  /** The row of a workspace's transfer: 404 when it is not one. */
  async findTransfer(workspaceId: string, id: string): Promise<TransferRow> {
    const row = isUuid(id)
      ? await this.db
          .selectFrom('transfers')
          .selectAll()
          .where('id', '=', id)
          .where('workspace_id', '=', workspaceId)
          .executeTakeFirst()
      : undefined;
    if (!row) throw notFound(`transfer ${id} was not found`);
    return row;
  }

  /** The job that runs a transfer over several objects; undefined for a single transfer. */
  async jobOf(transferId: string): Promise<JobRow | undefined> {
    return this.db.selectFrom('jobs').selectAll().where('transfer_id', '=', transferId).executeTakeFirst();
  }

  /** A transfer row as the API shows it, with its job's counts when it has one. */
  async viewOf(row: TransferRow, job?: JobRow | null): Promise<TransferView> {
    const owned = job === undefined ? await this.jobOf(row.id) : (job ?? undefined);
    if (owned === undefined) return transferView(row);
    const runningBytes = row.status === 'running' ? await objects.runningBytes(this.db, owned.id) : 0;
    return transferView(row, { row: owned, runningBytes });
  }

  async transfers(workspaceId: string, limit: number, cursor?: string): Promise<Page<TransferView>> {
    const page = await newestFirst(this.db, 'transfers', workspaceId, limit, cursor);
    // The page's jobs in one query, not one per transfer.
    const ids = page.rows.map((row) => row.id);
    const jobs =
      ids.length === 0
        ? []
        : await this.db.selectFrom('jobs').selectAll().where('transfer_id', 'in', ids).execute();
    const jobOf = new Map(jobs.map((job) => [job.transfer_id, job]));
    const items: TransferView[] = [];
    for (const row of page.rows) items.push(await this.viewOf(row, jobOf.get(row.id) ?? null));
    return {
      items,
      ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}),
    };
  }

  async findJob(workspaceId: string, id: string): Promise<JobRow> {
    const row = isUuid(id)
      ? await this.db
          .selectFrom('jobs')
          .selectAll()
          .where('id', '=', id)
          .where('workspace_id', '=', workspaceId)
          // A transfer's job is the transfer's business (GET /v1/transfers/{id}).
          .where('transfer_id', 'is', null)
          .executeTakeFirst()
      : undefined;
    if (!row) throw notFound(`job ${id} was not found`);
    return row;
  }

  /** A job as the API shows it: its counters (one row), and the bytes of the objects running now. */
  async jobView(row: JobRow): Promise<JobView> {
    return this.#jobView(row, await objects.runningBytes(this.db, row.id));
  }

  #jobView(row: JobRow, runningBytes: number): JobView {
    const counts = countsOf(row);
    const bytesDone = Number(row.bytes_finished) + runningBytes;
    const source = decodeRef(row.source);
    const destination = decodeRef(row.destination);
    return {
      job_id: row.id,
      status: row.status,
      from: { id: source.location_id, path: source.path },
      to: { id: destination.location_id, path: destination.path },
      overwrite: row.overwrite,
      ...times(row),
      counts,
      bytes_done: bytesDone,
      ...(row.error === null ? {} : { error: row.error }),
    };
  }

  /**
   * One statement, so one round trip (docs/performance.md, "Reading a job"), and the row and the
   * running bytes from one snapshot.
   */
  async job(workspaceId: string, id: string): Promise<JobView> {
    const row = isUuid(id)
      ? await this.db
          .selectFrom('jobs')
          .selectAll('jobs')
          .select(objects.runningBytesOf('jobs.id').as('running_bytes'))
          .where('jobs.id', '=', id)
          .where('jobs.workspace_id', '=', workspaceId)
          .where('jobs.transfer_id', 'is', null)
          .executeTakeFirst()
      : undefined;
    if (!row) throw notFound(`job ${id} was not found`);
    const { running_bytes, ...job } = row;
    return this.#jobView(job, Number(running_bytes));
  }

  async jobs(workspaceId: string, limit: number, cursor?: string): Promise<Page<JobView>> {
    const page = await newestFirst(this.db, 'jobs', workspaceId, limit, cursor);
    const items: JobView[] = [];
    for (const row of page.rows) items.push(await this.jobView(row));
    return { items, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
  }

  /** A transfer's failed objects, paged as a job's (a single transfer has none). */
  async transferFailures(workspaceId: string, id: string, limit: number, cursor?: string) {
    const transfer = await this.findTransfer(workspaceId, id);
    const job = await this.jobOf(transfer.id);
    if (job === undefined) return { failures: [] };
    return this.failuresOf(job.id, limit, cursor);
  }

  async failures(workspaceId: string, id: string, limit: number, cursor?: string) {
    const job = await this.findJob(workspaceId, id);
    return this.failuresOf(job.id, limit, cursor);
  }

  private async failuresOf(jobId: string, limit: number, cursor?: string) {
    const job = { id: jobId };
    let after = -1;
    if (cursor !== undefined) {
      after = Number(Buffer.from(cursor, 'base64url').toString('utf8'));
      if (!Number.isInteger(after) || after < 0) throw invalid('cursor is not valid');
    }
    const rows = await this.db
      .selectFrom('job_objects')
      .select(['seq', 'key', 'error', 'attempts', 'last_attempt_at'])
      .where('job_id', '=', job.id)
      .where('status', '=', 'failed')
      .where('seq', '>', after)
      .orderBy('seq', 'asc')
      .limit(limit + 1)
      .execute();
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      failures: page.map((r) => ({
        key: r.key,
        error: r.error ?? 'unknown error',
        attempts: r.attempts,
        ...(r.last_attempt_at === null ? {} : { last_attempt_at: toRfc3339(r.last_attempt_at) }),
      })),
      ...(rows.length > limit && last
        ? { next_cursor: Buffer.from(String(last.seq), 'utf8').toString('base64url') }
        : {}),
    };
  }
}
