// A schedule's runs (docs/api.md, "Schedules"). A due schedule is claimed with a lease by one worker
// process (src/queue/claim.ts); the run is recorded under the unique (schedule_id, due_at) before
// anything starts, so a due time runs once however many processes claim it, even when a lease runs out
// mid-run. A run whose previous job has not finished is skipped (skipped_overlap); one whose action is
// refused (a deleted location, the rate limit) is recorded failed with the reason, and the schedule
// stays. The next time is computed from the later of the due time and now: runs missed while ferry was
// down run once, not once per missed time. Every write after the claim checks the lease owner.

import { sql } from 'kysely';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/database.js';
import type { ScheduleRow, ScheduleRunRow } from '../../db/schema.js';
import { DurableJsonError } from '../../durable/codec.js';
import { scheduleCallerLocations } from '../../durable/records.js';
import { type FerryError, isFerryError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Logger } from '../../log.js';
import { skipLocked } from '../../queue/claim.js';
import { SCHEDULES } from '../../queue/leased.js';
import { claimLeased, leaseFree, unleased } from '../../queue/leases.js';
import { JOB_ACTIVE } from '../../states.js';
import type { AuditContext } from '../audit/audit.js';
import type { Caller } from '../caller.js';
import { actionOf, type ScheduleActions } from './actions.js';
import { nextRun } from './every.js';

/** Runs kept per schedule (GET /v1/schedules/{id} shows them); older ones are deleted as new ones come. */
export const RUNS_KEPT = 50;

export type RunOutcome = 'started' | 'skipped_overlap' | 'failed';

export interface RunRecord {
  schedule_id: string;
  due_at: number;
  outcome: RunOutcome;
  job_id?: string;
  reason?: string;
}

/** A run's record, and for a refused action the refusal itself (a manual run answers with it). */
export type RunResult = RunRecord & { error?: FerryError };

export interface RunnerDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  actions: ScheduleActions;
}

export class ScheduleRunner {
  constructor(private readonly deps: RunnerDeps) {}

  /** Claims up to `limit` due schedules for `owner` until now + leaseMs. */
  async claimDue(owner: string, leaseMs: number, limit: number): Promise<ScheduleRow[]> {
    const { db, clock } = this.deps;
    const now = clock.now();
    return claimLeased<ScheduleRow>(
      db.kysely,
      SCHEDULES,
      { owner, now, until: now + leaseMs },
      {
        pick: sql`select id from schedules
        where paused = 0 and next_run_at <= ${now}
          and ${leaseFree(SCHEDULES, now)}
        order by next_run_at
        limit ${limit}
        ${skipLocked(db.dialect)}`,
      },
    );
  }

  /** Claims one schedule of the workspace now, due or not; undefined while someone holds it. */
  async claimOne(
    workspaceId: string,
    id: string,
    owner: string,
    leaseMs: number,
  ): Promise<ScheduleRow | undefined> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const [row] = await claimLeased<ScheduleRow>(
      db.kysely,
      SCHEDULES,
      { owner, now, until: now + leaseMs },
      {
        pick: sql`select id from schedules
        where id = ${id} and workspace_id = ${workspaceId}
          and ${leaseFree(SCHEDULES, now)}
        ${skipLocked(db.dialect)}`,
      },
    );
    return row;
  }

  /**
   * When the next schedule is due, or, for one due while someone holds it, when that lease runs out;
   * undefined when none is. A lease that ended on a schedule not yet due (a manual run's holder died,
   * src/queue/leases.ts endLeasesOf) makes it due at its next time, not at once and again.
   */
  async nextDue(): Promise<number | undefined> {
    const row = await this.deps.db.kysely
      .selectFrom('schedules')
      .select((eb) =>
        eb.fn
          .min(
            sql<number>`case when lease_owner is not null and lease_expires_at > next_run_at
              then lease_expires_at else next_run_at end`,
          )
          .as('due'),
      )
      .where('paused', '=', 0)
      .where('next_run_at', 'is not', null)
      .executeTakeFirst();
    return row?.due === null || row?.due === undefined ? undefined : Number(row.due);
  }

  /**
   * Runs a schedule `owner` claimed, for the time `dueAt`; then frees it. A `manual` run (POST
   * /v1/schedules/{id}/run) leaves the next time alone.
   */
  async run(
    row: ScheduleRow,
    dueAt: number,
    owner: string,
    manual: boolean,
    /** A run a request made records itself (schedule.run) in its job's transaction. */
    audit?: AuditContext,
  ): Promise<RunResult | undefined> {
    const { db, clock } = this.deps;
    const runId = newId();
    const inserted = await db.kysely
      .insertInto('schedule_runs')
      .values({
        id: runId,
        schedule_id: row.id,
        due_at: dueAt,
        ran_at: clock.now(),
        outcome: 'starting',
        job_id: null,
        reason: null,
      })
      .onConflict((oc) => oc.columns(['schedule_id', 'due_at']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted === undefined) {
      // Another process ran this due time and lost its lease before it freed the schedule.
      await this.#settle(row.id, owner, dueAt, manual, undefined);
      return undefined;
    }
    const record = await this.#start(row, dueAt, audit);
    await db.kysely
      .updateTable('schedule_runs')
      .set({ outcome: record.outcome, job_id: record.job_id ?? null, reason: record.reason ?? null })
      .where('id', '=', runId)
      .execute();
    await this.#settle(row.id, owner, dueAt, manual, record.job_id);
    await this.#trim(row.id);
    return record;
  }

  async #start(row: ScheduleRow, dueAt: number, audit: AuditContext | undefined): Promise<RunResult> {
    const { db, logger, actions } = this.deps;
    const previous = await db.kysely
      .selectFrom('jobs')
      .select('id')
      .where('schedule_id', '=', row.id)
      .where('status', 'in', JOB_ACTIVE)
      .limit(1)
      .executeTakeFirst();
    if (previous !== undefined) {
      return {
        schedule_id: row.id,
        due_at: dueAt,
        outcome: 'skipped_overlap',
        reason: `job ${previous.id} of an earlier run has not finished`,
      };
    }
    try {
      const action = actionOf(row);
      const jobId = await actions.start(scheduleCaller(row), action, row.id, audit);
      return { schedule_id: row.id, due_at: dueAt, outcome: 'started', job_id: jobId };
    } catch (err) {
      // The action's own refusal is the reason (its messages hold no secret: src/errors.ts); anything
      // else is logged and recorded without its details.
      if (isFerryError(err) && err.kind !== 'internal')
        return { schedule_id: row.id, due_at: dueAt, outcome: 'failed', reason: err.message, error: err };
      logger.error({ err, schedule: row.id }, 'schedule: a run failed');
      // An action this version cannot read says so (its message names the row, never the action).
      const reason = err instanceof DurableJsonError ? err.message : 'internal error';
      return { schedule_id: row.id, due_at: dueAt, outcome: 'failed', reason };
    }
  }

  /** Frees the schedule with its next time (read now: a PATCH may have changed it meanwhile). */
  async #settle(
    id: string,
    owner: string,
    dueAt: number,
    manual: boolean,
    jobId: string | undefined,
  ): Promise<void> {
    const { db, clock } = this.deps;
    const now = clock.now();
    await db.kysely.transaction().execute(async (trx) => {
      const current = await trx
        .selectFrom('schedules')
        .select(['cron', 'timezone', 'paused', 'next_run_at'])
        .where('id', '=', id)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      if (current === undefined) return;
      const next =
        current.paused !== 0
          ? null
          : manual || (current.next_run_at !== null && current.next_run_at > dueAt)
            ? current.next_run_at
            : (nextRun(current.cron, current.timezone, Math.max(now, dueAt)) ?? null);
      await trx
        .updateTable('schedules')
        .set({
          next_run_at: next,
          last_run_at: now,
          ...(jobId === undefined ? {} : { last_job_id: jobId }),
          ...unleased(SCHEDULES),
        })
        .where('id', '=', id)
        .where('lease_owner', '=', owner)
        .execute();
    });
  }

  /** Keeps the newest RUNS_KEPT runs of a schedule. */
  async #trim(id: string): Promise<void> {
    const { db } = this.deps;
    const cutoff = await db.kysely
      .selectFrom('schedule_runs')
      .select('due_at')
      .where('schedule_id', '=', id)
      .orderBy('due_at', 'desc')
      .offset(RUNS_KEPT)
      .limit(1)
      .executeTakeFirst();
    if (cutoff === undefined) return;
    await db.kysely
      .deleteFrom('schedule_runs')
      .where('schedule_id', '=', id)
      .where('due_at', '<=', cutoff.due_at)
      .execute();
  }

  /** A schedule's runs, newest first (at most RUNS_KEPT). */
  async history(id: string): Promise<ScheduleRunRow[]> {
    return this.deps.db.kysely
      .selectFrom('schedule_runs')
      .selectAll()
      .where('schedule_id', '=', id)
      .orderBy('due_at', 'desc')
      .limit(RUNS_KEPT)
      .execute();
  }
}

/**
 * Who a schedule's run acts as: its workspace, within the locations of the key that gave its action
 * (docs/api.md, "Scopes"), so that a name it resolves again at each run cannot reach beyond them.
 */
export function scheduleCaller(row: Pick<ScheduleRow, 'id' | 'workspace_id' | 'caller_locations'>): Caller {
  return {
    workspaceId: row.workspace_id,
    locations:
      row.caller_locations === null
        ? null
        : new Set(scheduleCallerLocations.decode(row.caller_locations, row.id)),
  };
}
