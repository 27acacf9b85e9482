// Polling (docs/api.md, "Polling"): reading the transfer and job resources (shown as src/api/views.ts
// builds them), their lists (newest first, src/db/paging.ts) and a job's failures (paged by object
// sequence).
import { type Kysely, sql } from 'kysely';
import type { Failures, Job, Transfer } from '../../api/transfers.js';
import { jobView, transferView } from '../../api/views.js';
import { toRfc3339 } from '../../clock.js';
import { decodeSeqCursor, encodeSeqCursor, newestFirst, type Page, pageOf } from '../../db/paging.js';
import type { Database, JobRow, TransferRow } from '../../db/schema.js';
import { workspaceRow } from '../../db/workspace-row.js';
import { EQUAL_PREFIX } from '../../engine/sync-plan.js';
import { notFound } from '../../errors.js';
import { isUuid } from '../../ids.js';
import * as objectReads from '../../lifecycle/object-reads.js';
import { type Caller, withinLocations } from '../caller.js';

export class TransferViews {
  constructor(private readonly db: Kysely<Database>) {}

  async transfer(caller: Caller, id: string): Promise<Transfer> {
    return this.viewOf(await this.findTransfer(caller, id));
  }

  /** The row of a workspace's transfer: 404 when it is not one. */
  async findTransfer(caller: Caller, id: string): Promise<TransferRow> {
    const row = await workspaceRow(this.db, 'transfers', caller.workspaceId, id, withinLocations(caller));
    if (!row) throw notFound(`transfer ${id} was not found`);
    return row;
  }

  /** The job that runs a transfer over several objects; undefined for a single transfer. */
  async jobOf(transferId: string): Promise<JobRow | undefined> {
    return this.db.selectFrom('jobs').selectAll().where('transfer_id', '=', transferId).executeTakeFirst();
  }

  /** A transfer row as the API shows it, with its job's counts when it has one. */
  async viewOf(row: TransferRow, job?: JobRow | null): Promise<Transfer> {
    const owned = job === undefined ? await this.jobOf(row.id) : (job ?? undefined);
    if (owned === undefined) return transferView(row);
    const runningBytes = row.status === 'running' ? await objectReads.runningBytes(this.db, owned.id) : 0;
    return transferView(row, { row: owned, runningBytes });
  }

  async transfers(caller: Caller, limit: number, cursor?: string): Promise<Page<Transfer>> {
    const page = await newestFirst(
      this.db,
      'transfers',
      caller.workspaceId,
      limit,
      cursor,
      withinLocations(caller),
    );
    // The page's jobs in one query, not one per transfer.
    const ids = page.rows.map((row) => row.id);
    const jobs =
      ids.length === 0
        ? []
        : await this.db.selectFrom('jobs').selectAll().where('transfer_id', 'in', ids).execute();
    const jobOf = new Map(jobs.map((job) => [job.transfer_id, job]));
    const items: Transfer[] = [];
    for (const row of page.rows) items.push(await this.viewOf(row, jobOf.get(row.id) ?? null));
    return {
      items,
      ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}),
    };
  }

  async findJob(caller: Caller, id: string): Promise<JobRow> {
    // A transfer's job is the transfer's business (GET /v1/transfers/{id}).
    const notTransfers = sql<boolean>`transfer_id is null and ${withinLocations(caller)}`;
    const row = await workspaceRow(this.db, 'jobs', caller.workspaceId, id, notTransfers);
    if (!row) throw notFound(`job ${id} was not found`);
    return row;
  }

  /** A job as the API shows it: its counters (one row), and the bytes of the objects running now. */
  async jobView(row: JobRow): Promise<Job> {
    return jobView(row, await objectReads.runningBytes(this.db, row.id));
  }

  /**
   * One statement, so one round trip (docs/performance.md, "Reading a job"), and the row and the
   * running bytes from one snapshot.
   */
  async job(caller: Caller, id: string): Promise<Job> {
    const row = isUuid(id)
      ? await this.db
          .selectFrom('jobs')
          .selectAll('jobs')
          .select(objectReads.runningBytesOf('jobs.id').as('running_bytes'))
          .where('jobs.id', '=', id)
          .where('jobs.workspace_id', '=', caller.workspaceId)
          .where(withinLocations(caller, 'jobs.location_ids'))
          .where('jobs.transfer_id', 'is', null)
          .executeTakeFirst()
      : undefined;
    if (!row) throw notFound(`job ${id} was not found`);
    const { running_bytes, ...job } = row;
    return jobView(job, Number(running_bytes));
  }

  /** The workspace's jobs, newest first; with `scheduleId`, only that schedule's runs. */
  async jobs(caller: Caller, limit: number, cursor?: string, scheduleId?: string): Promise<Page<Job>> {
    const within = withinLocations(caller);
    const filter =
      scheduleId === undefined ? within : sql<boolean>`schedule_id = ${scheduleId} and ${within}`;
    const page = await newestFirst(this.db, 'jobs', caller.workspaceId, limit, cursor, filter);
    const items: Job[] = [];
    for (const row of page.rows) items.push(await this.jobView(row));
    return { items, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
  }

  /** A transfer's failed objects, paged as a job's (a single transfer has none). */
  async transferFailures(caller: Caller, id: string, limit: number, cursor?: string): Promise<Failures> {
    const transfer = await this.findTransfer(caller, id);
    const job = await this.jobOf(transfer.id);
    if (job === undefined) return { failures: [] };
    return this.failuresOf(job.id, limit, cursor);
  }

  async failures(caller: Caller, id: string, limit: number, cursor?: string): Promise<Failures> {
    const job = await this.findJob(caller, id);
    return this.failuresOf(job.id, limit, cursor);
  }

  private async failuresOf(jobId: string, limit: number, cursor?: string): Promise<Failures> {
    const rows = await this.db
      .selectFrom('job_objects')
      .select(['seq', 'key', 'status', 'error', 'attempts', 'last_attempt_at'])
      .where('job_id', '=', jobId)
      // With the failed ones, the objects left alone with a reason (a plan's run, docs/api.md "Plans"; a
      // sync's deletion not done): not a sync's objects skipped as equal, which were what was asked.
      .where((eb) =>
        eb.or([
          eb('status', '=', 'failed'),
          eb.and([
            eb('status', '=', 'skipped'),
            eb('error', 'is not', null),
            eb('error', 'not like', `${EQUAL_PREFIX}%`),
          ]),
        ]),
      )
      .where('seq', '>', decodeSeqCursor(cursor))
      .orderBy('seq', 'asc')
      .limit(limit + 1)
      .execute();
    const page = pageOf(rows, limit, (last) => encodeSeqCursor(last.seq));
    return {
      failures: page.rows.map((r) => ({
        key: r.key,
        error: r.error ?? 'unknown error',
        attempts: r.attempts,
        ...(r.last_attempt_at === null ? {} : { last_attempt_at: toRfc3339(r.last_attempt_at) }),
        ...(r.status === 'skipped' ? { outcome: 'skipped' as const } : {}),
      })),
      ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
    };
  }
}
