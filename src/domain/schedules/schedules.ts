// Schedules (docs/api.md, "Schedules"): a workspace's recurring bulk copies and syncs. Create and patch
// read `every` (every.ts), the zone, and check the action as its own route would (actions.ts); a paused
// schedule has no next run, and resuming computes it from now. Running one now claims it like the
// scheduler does (runs.ts), so a manual run and a due one never start together.

import type { Kysely } from 'kysely';
import type { Schedule, ScheduleRun, ScheduleWithRuns } from '../../api/schedules.js';
import { type CountColumns, countsOf } from '../../api/views.js';
import { type Clock, toRfc3339 } from '../../clock.js';
import { newestFirst, type Page } from '../../db/paging.js';
import type { Database, JobRow, ScheduleRow, ScheduleRunRow } from '../../db/schema.js';
import { workspaceRow } from '../../db/workspace-row.js';
import { scheduleAction, scheduleCallerLocations } from '../../durable/records.js';
import { conflict, isFerryError, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { locationIds } from '../../lifecycle/specs.js';
import { SCHEDULES } from '../../queue/leased.js';
import { unleased } from '../../queue/leases.js';
import { type AuditContext, record } from '../audit/audit.js';
import { type Caller, withinLocations } from '../caller.js';
import { checkCap } from '../caps.js';
import { checkTimezone } from '../sends/schedule.js';
import { actionOf, type ScheduleAction, type ScheduleActions } from './actions.js';
import { nextRun, readEvery } from './every.js';
import type { ScheduleRunner } from './runs.js';

export interface NewSchedule {
  name: string;
  every: string;
  timezone?: string;
  action: ScheduleAction;
  paused?: boolean;
}

export type ScheduleChange = Partial<Omit<NewSchedule, 'timezone'>> & { timezone?: string };

/** How long a manual run holds the schedule (it checks the action and writes a job: well under it). */
const MANUAL_LEASE_MS = 60_000;

function view(row: ScheduleRow): Schedule {
  return {
    id: row.id,
    name: row.name,
    every: row.every,
    cron: row.cron,
    timezone: row.timezone,
    action: scheduleAction.decode(row.action, row.id),
    paused: row.paused !== 0,
    ...(row.next_run_at === null ? {} : { next_run_at: toRfc3339(Number(row.next_run_at)) }),
    ...(row.last_run_at === null ? {} : { last_run_at: toRfc3339(Number(row.last_run_at)) }),
    ...(row.last_job_id === null ? {} : { last_job_id: row.last_job_id }),
    created_at: toRfc3339(Number(row.created_at)),
    updated_at: toRfc3339(Number(row.updated_at)),
  };
}

/** What a run's summary shows of its job: where it stands, and its counts. */
type RunJob = Pick<JobRow, 'id' | 'status' | CountColumns>;

function runView(row: ScheduleRunRow, job: RunJob | undefined): ScheduleRun {
  // A run still `starting` was cut short between its record and its job (the process stopped).
  const outcome = row.outcome === 'starting' ? 'failed' : row.outcome;
  const reason = row.outcome === 'starting' ? 'interrupted: ferry stopped during the run' : row.reason;
  return {
    due_at: toRfc3339(Number(row.due_at)),
    ran_at: toRfc3339(Number(row.ran_at)),
    outcome,
    ...(row.job_id === null ? {} : { job_id: row.job_id }),
    ...(reason === null ? {} : { reason }),
    ...(job === undefined ? {} : { job_status: job.status, counts: countsOf(job) }),
  };
}

export class Schedules {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly actions: ScheduleActions,
    private readonly runner: ScheduleRunner,
    /** This process's lease owner id, for manual runs. */
    private readonly owner: string,
    /** Schedules per workspace (FERRY_MAX_SCHEDULES). */
    private readonly cap: number,
  ) {}

  async create(caller: Caller, input: NewSchedule, audit: AuditContext): Promise<Schedule> {
    const { workspaceId } = caller;
    const timezone = checkTimezone(input.timezone);
    const { every, cron } = readEvery(input.every, timezone);
    const touches = await this.actions.check(caller, input.action);
    const now = this.clock.now();
    const paused = input.paused ?? false;
    const row = {
      id: newId(),
      workspace_id: workspaceId,
      name: input.name,
      every,
      cron,
      timezone,
      action: scheduleAction.encode(input.action),
      location_ids: locationIds(touches),
      caller_locations: callerLocations(caller),
      paused: paused ? 1 : 0,
      next_run_at: paused ? null : (nextRun(cron, timezone, now) ?? null),
      last_run_at: null,
      last_job_id: null,
      ...unleased(SCHEDULES),
      created_at: now,
      updated_at: now,
    } satisfies ScheduleRow;
    await this.db.transaction().execute(async (trx) => {
      await checkCap(trx, 'schedules', workspaceId, this.cap, now);
      await trx.insertInto('schedules').values(row).execute();
      await record(trx, audit, { action: 'schedule.create', target: row.id, status: 201 }, now);
    });
    return view(row);
  }

  async #find(caller: Caller, id: string): Promise<ScheduleRow> {
    const row = await workspaceRow(this.db, 'schedules', caller.workspaceId, id, withinLocations(caller));
    if (!row) throw notFound(`schedule ${id} was not found`);
    return row;
  }

  /**
   * Whether the schedule's action is a sync that deletes what its source lacks (false when there is no
   * such schedule): what a run now needs of the key (docs/api.md, "Scopes").
   */
  async deletes(caller: Caller, id: string): Promise<boolean> {
    let row: ScheduleRow;
    try {
      row = await this.#find(caller, id);
    } catch (err) {
      if (isFerryError(err, 'not_found')) return false;
      throw err;
    }
    const action = actionOf(row);
    return 'sync' in action && action.sync.delete === true;
  }

  async list(caller: Caller, limit: number, cursor?: string): Promise<Page<Schedule>> {
    const page = await newestFirst(
      this.db,
      'schedules',
      caller.workspaceId,
      limit,
      cursor,
      withinLocations(caller),
    );
    return {
      items: page.rows.map(view),
      ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
    };
  }

  async get(caller: Caller, id: string): Promise<ScheduleWithRuns> {
    const row = await this.#find(caller, id);
    const runs = await this.runner.history(row.id);
    // The runs' jobs in one query (a job pruned by retention is simply not shown).
    const ids = runs.flatMap((run) => (run.job_id === null ? [] : [run.job_id]));
    const jobs =
      ids.length === 0
        ? []
        : await this.db
            .selectFrom('jobs')
            .select([
              'id',
              'status',
              'objects_total',
              'objects_pending',
              'objects_succeeded',
              'objects_skipped',
              'objects_failed',
              'objects_deleted',
              'objects_size_only',
              'kind',
              'objects_equal',
              'objects_differ',
              'objects_missing_in_destination',
              'objects_missing_in_source',
            ])
            .where('id', 'in', ids)
            .where('workspace_id', '=', caller.workspaceId)
            .execute();
    const byId = new Map(jobs.map((job) => [job.id, job]));
    return {
      ...view(row),
      runs: runs.map((run) => runView(run, run.job_id === null ? undefined : byId.get(run.job_id))),
    };
  }

  /** Changes what is given; a new `every` or zone, or a resume, computes the next run from now. */
  async update(caller: Caller, id: string, change: ScheduleChange, audit: AuditContext): Promise<Schedule> {
    const row = await this.#find(caller, id);
    const timezone = change.timezone === undefined ? row.timezone : checkTimezone(change.timezone);
    const read =
      change.every === undefined && change.timezone === undefined
        ? { every: row.every, cron: row.cron }
        : readEvery(change.every ?? row.every, timezone);
    const touches = change.action === undefined ? undefined : await this.actions.check(caller, change.action);
    const now = this.clock.now();
    const paused = change.paused ?? row.paused !== 0;
    const timing =
      change.every !== undefined || change.timezone !== undefined || paused !== (row.paused !== 0);
    const next = paused
      ? null
      : timing || row.next_run_at === null
        ? (nextRun(read.cron, timezone, now) ?? null)
        : row.next_run_at;
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('schedules')
        .set({
          ...(change.name === undefined ? {} : { name: change.name }),
          every: read.every,
          cron: read.cron,
          timezone,
          ...(touches === undefined || change.action === undefined
            ? {}
            : {
                action: scheduleAction.encode(change.action),
                location_ids: locationIds(touches),
                caller_locations: callerLocations(caller),
              }),
          paused: paused ? 1 : 0,
          next_run_at: next,
          updated_at: now,
        })
        .where('id', '=', row.id)
        .execute();
      await record(trx, audit, { action: 'schedule.update', target: row.id, status: 200 }, now);
    });
    return view(await this.#find(caller, id));
  }

  /** Deletes the schedule and its runs; the jobs it started stay. */
  async delete(caller: Caller, id: string, audit: AuditContext): Promise<void> {
    const row = await this.#find(caller, id);
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('schedule_runs').where('schedule_id', '=', row.id).execute();
      await trx.deleteFrom('schedules').where('id', '=', row.id).execute();
      await record(trx, audit, { action: 'schedule.delete', target: row.id, status: 204 }, this.clock.now());
    });
  }

  /**
   * Runs the schedule now (paused or not): 202 with its job; 409 when its previous job has not
   * finished or another run of it is starting; the action's own refusal otherwise (a deleted location
   * is 404). The run is recorded like any other; the next run keeps its time.
   */
  async runNow(
    caller: Caller,
    id: string,
    audit: AuditContext,
  ): Promise<{ job_id: string; status: 'planning' }> {
    await this.#find(caller, id);
    const claimed = await this.runner.claimOne(caller.workspaceId, id, this.owner, MANUAL_LEASE_MS);
    if (claimed === undefined) throw conflict(`schedule ${id} is starting a run now; try again in a moment`);
    const result = await this.runner.run(claimed, this.clock.now(), this.owner, true, audit);
    if (result === undefined) throw conflict(`schedule ${id} ran at this moment already`);
    if (result.outcome === 'skipped_overlap') throw conflict(`schedule ${id}: ${result.reason}`);
    if (result.error !== undefined) throw result.error;
    if (result.job_id === undefined) throw conflict(`schedule ${id}: ${result.reason ?? 'the run failed'}`);
    return { job_id: result.job_id, status: 'planning' };
  }
}

/** A schedule's runs act within the locations of the key that gave its action (./runs.ts). */
function callerLocations(caller: Caller): string | null {
  return caller.locations === null ? null : scheduleCallerLocations.encode([...caller.locations]);
}
