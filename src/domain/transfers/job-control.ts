// Job retry, cancel and undo for the API (docs/api.md, "Polling"): finds the workspace's job and asks its
// lifecycle (src/lifecycle/jobs.ts) for the move; a job in the wrong state answers 409 with
// the state it is in. Each move is one conditional transaction, so a worker finishing the job at the
// same moment cannot be overwritten.
import type { Kysely } from 'kysely';
import type { Scope } from '../../api/scopes.js';
import type { Clock } from '../../clock.js';
import type { Database, JobRow, TransferRow } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/unavailable.js';
import { objectTouched } from '../../durable/work.js';
import { cannotComeBack } from '../../engine/undo.js';
import { conflict, isFerryError } from '../../errors.js';
import { newId } from '../../ids.js';
import * as jobs from '../../lifecycle/jobs.js';
import * as transfers from '../../lifecycle/transfers.js';
import { hasFinished, JOB_ACTIVE } from '../../states.js';
import { type AuditContext, type AuditEntry, record } from '../audit/audit.js';
import type { Caller } from '../caller.js';
import type { TransferViews } from './views.js';

/**
 * The states of an undo that keep another undo of the same job from starting: those of a job still at
 * work, as the unique index jobs_one_undo has them (migration 2026-12-03-z-one-undo).
 */
const UNDO_HOLDS = JOB_ACTIVE;

export class JobControl {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly views: TransferViews,
    private readonly clock: Clock,
    /** Wakes the workers of every process, so that the job's running objects stop at once. */
    private readonly canceled: () => void = () => {},
  ) {}

  /**
   * A move and its audit record (last, only when the move was made), in one transaction: whether it
   * was made.
   */
  #recorded(
    audit: AuditContext,
    entry: AuditEntry,
    move: (trx: Kysely<Database>, now: number) => Promise<boolean>,
  ): Promise<boolean> {
    const now = this.clock.now();
    return this.db.transaction().execute(async (trx) => {
      if (!(await move(trx, now))) return false;
      await record(trx, audit, entry, now);
      return true;
    });
  }

  async retry(
    caller: Caller,
    id: string,
    audit: AuditContext,
  ): Promise<{ job_id: string; status: 'planning' }> {
    const job = await this.views.findJob(caller, id);
    const entry: AuditEntry = { action: 'job.retry', target: job.id, status: 202 };
    if (!(await this.#recorded(audit, entry, (trx, now) => jobs.retryWithin(trx, job.id, now)))) {
      throw conflict(`job ${job.id} is ${job.status}; only partial or failed jobs can be retried`);
    }
    return { job_id: job.id, status: 'planning' };
  }

  /**
   * A failed transfer over several objects runs its failed objects again: the transfer queued and its
   * job planning, in one transaction (docs/api.md, "Polling"). 409 otherwise, a single transfer included.
   */
  async retryTransfer(
    caller: Caller,
    id: string,
    audit: AuditContext,
  ): Promise<{ id: string; status: 'queued' }> {
    const transfer = await this.views.findTransfer(caller, id);
    const job = await this.views.jobOf(transfer.id);
    const entry: AuditEntry = { action: 'transfer.retry', target: transfer.id, status: 202 };
    const retried =
      job !== undefined &&
      (await this.#recorded(audit, entry, async (trx, now) => {
        if (!(await transfers.retry(trx, transfer.id, now))) return false;
        if (!(await jobs.retryWithin(trx, job.id, now)))
          throw conflict(`transfer ${transfer.id} cannot be retried now`);
        return true;
      }));
    if (!retried) {
      throw conflict(
        job === undefined
          ? `transfer ${transfer.id} is a single transfer; only a failed transfer over several objects can be retried`
          : `transfer ${transfer.id} is ${transfer.status}; only failed transfers can be retried`,
      );
    }
    return { id: transfer.id, status: 'queued' };
  }

  /**
   * An undo of a finished job (docs/api.md, "Undo"): a new job, kind undo, that puts back what the job
   * did at its destination. `id` is a job's, or a move's or remove's transfer's. 409 for a job that
   * has not finished, an undo, or one with objects that cannot come back (deleted or overwritten
   * without a backup), naming them.
   */
  async undo(
    caller: Caller,
    id: string,
    audit: AuditContext,
  ): Promise<{ job_id: string; status: 'planning' }> {
    const job = await this.undoable(caller, id);
    if (!hasFinished('job', job.status)) {
      throw conflict(`job ${id} is ${job.status}; only a finished job can be undone`);
    }
    if (job.kind === 'undo') throw conflict(`job ${id} is an undo; it cannot be undone`);
    const lost = await this.cannotComeBack(job.id);
    if (lost.count > 0) {
      const named = lost.objects.map((o) => `${o.key} (${o.reason})`).join(', ');
      // The one error shape (docs/api.md, "Errors"): the objects are named in the message, at most 100.
      throw conflict(
        `job ${id} ran without backup_to: ${lost.count} object(s) it deleted or overwrote cannot come back: ${named}${lost.count > lost.objects.length ? ', …' : ''}`,
      );
    }
    const undoId = newId();
    const entry: AuditEntry = { action: 'job.undo', target: id, status: 202 };
    const now = this.clock.now();
    return this.db.transaction().execute(async (trx) => {
      // One undo of a job at a time: one that is planning or running holds the place (a finished one
      // leaves it free: undoing again changes nothing that is already back). The unique index
      // jobs_one_undo keeps two requests at the same moment from both passing this check (migration
      // 2026-12-03-z-one-undo).
      const holding = await trx
        .selectFrom('jobs')
        .select(['id', 'status'])
        .where('undo_of', '=', job.id)
        .where('status', 'in', UNDO_HOLDS)
        .executeTakeFirst();
      if (holding !== undefined) {
        throw conflict(`job ${id} is being undone by job ${holding.id} (${holding.status})`);
      }
      const created = await jobs
        .create(
          trx,
          {
            id: undoId,
            workspaceId: caller.workspaceId,
            kind: 'undo',
            undoOf: job.id,
            source: job.destination,
            destination: job.destination,
            overwrite: 'always',
            manifest: undefined,
            touches: (job.location_ids ?? '').split(',').filter((s) => s !== ''),
          },
          now,
        )
        .catch((err: unknown) => {
          if (!isUniqueViolation(err)) throw err;
          throw conflict(`job ${id} is being undone by another job, started at the same moment`, err);
        });
      await record(trx, audit, entry, now);
      return created;
    });
  }

  /**
   * The scopes an undo needs (docs/api.md, "Scopes"): the job's own (`remove` for a remove's, `transfer`
   * for the others) and `remove`, since an undo deletes. Both when the id names nothing: the route's 404
   * then comes from undo().
   */
  async undoNeeds(caller: Caller, id: string): Promise<Scope | Scope[]> {
    try {
      const job = await this.undoable(caller, id);
      if (job.transfer_id !== null) {
        const transfer = await this.views.findTransfer(caller, job.transfer_id);
        if (transfer.kind === 'remove') return 'remove';
      }
    } catch (err) {
      if (!isFerryError(err)) throw err;
    }
    return ['transfer', 'remove'];
  }

  /** The job an undo names: a job, or the one that ran a move's or remove's transfer. */
  private async undoable(caller: Caller, id: string): Promise<JobRow> {
    try {
      return await this.views.findJob(caller, id);
    } catch (err) {
      if (!isFerryError(err, 'not_found')) throw err;
      let transfer: TransferRow;
      try {
        transfer = await this.views.findTransfer(caller, id);
      } catch {
        throw err;
      }
      const job = await this.views.jobOf(transfer.id);
      if (job === undefined) {
        throw conflict(
          `transfer ${id} ran without backup_to over one object; it kept nothing an undo could read`,
        );
      }
      return job;
    }
  }

  /** The objects of a job that an undo cannot put back (at most 100 named), read a page at a time. */
  private async cannotComeBack(
    jobId: string,
  ): Promise<{ count: number; objects: Array<{ key: string; reason: string }> }> {
    const objects: Array<{ key: string; reason: string }> = [];
    let count = 0;
    let after = -1;
    for (;;) {
      const page = await this.db
        .selectFrom('job_objects')
        .select(['seq', 'key', 'touched'])
        .where('job_id', '=', jobId)
        .where('seq', '>', after)
        .where('status', '=', 'succeeded')
        .where('touched', 'is not', null)
        .orderBy('seq')
        .limit(1000)
        .execute();
      for (const row of page) {
        const reason = cannotComeBack(objectTouched.decode(row.touched as string, `${jobId}/${row.seq}`));
        if (reason === undefined) continue;
        count += 1;
        if (objects.length < 100) objects.push({ key: row.key, reason });
      }
      const last = page.at(-1);
      if (last === undefined || page.length < 1000) break;
      after = last.seq;
    }
    return { count, objects };
  }

  async cancel(
    caller: Caller,
    id: string,
    audit: AuditContext,
  ): Promise<{ job_id: string; status: 'canceled' }> {
    const job = await this.views.findJob(caller, id);
    const entry: AuditEntry = { action: 'job.cancel', target: job.id, status: 202 };
    if (!(await this.#recorded(audit, entry, (trx, now) => jobs.cancelWithin(trx, job.id, now)))) {
      throw conflict(`job ${job.id} is ${job.status}; only a job that has not finished can be canceled`);
    }
    this.canceled();
    return { job_id: job.id, status: 'canceled' };
  }
}
