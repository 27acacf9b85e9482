// Plans, a preview that binds (docs/api.md, "Plans"). A dry run of a bulk copy, a move or a remove
// makes every check the request makes, lists what it would do and writes it as a plan: its entries
// in batches as the listing streams (never held whole), at most PLAN_MAX_ENTRIES of them and for at
// most PLAN_MAX_MS. Running the plan queues the request's own work (a bulk job, or a transfer with its
// job) naming the plan; the engine plans that job from the plan's entries and checks each object
// against them when it runs (src/engine/planner.ts, src/engine/run-object.ts).
//
// The store is generic over a kind, a resolved request and a stream of entries (write()): each kind
// (copy, sync, move, remove) has a PlanRequest of its own, an entry generator, and a case in run().
// The audit log records a dry run that made a plan as plan.create, and its run as the action it
// performs, each naming what it acts on (./audit.ts).

import { MANIFEST_MAX_KEYS } from '../../api/copy.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/database.js';
import { decodeSeqCursor, encodeSeqCursor, pageOf } from '../../db/paging.js';
import type { LocationRow, PlanRow } from '../../db/schema.js';
import * as durable from '../../durable/work.js';
import type { OpenStore } from '../../engine/planned.js';
import { listedKeys, specObjects } from '../../engine/planner.js';
import { syncObjects } from '../../engine/sync-plan.js';
import { conflict, gone, invalid, isFerryError, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import * as jobs from '../../lifecycle/jobs.js';
import type { PlanEntry, PlanRequest } from '../../lifecycle/plans.js';
import * as plans from '../../lifecycle/plans.js';
import type { JobOptions, ObjectRef } from '../../lifecycle/specs.js';
import { compileFilter, type FilterInput } from '../../objects/filter.js';
import { type AuditContext, type AuditEntry, record } from '../audit/audit.js';
import { type Caller, withinLocations } from '../caller.js';
import type { Locations } from '../locations/locations.js';
import { checkUsable } from '../locations/usable.js';
import type { RateLimits } from '../rate-limit.js';
import type { Storage } from '../storage.js';
import type { Copies, CopyRequest, SyncRequest } from '../transfers/copy.js';
import type { Operations } from '../transfers/operations.js';
import { queueWithJob } from '../transfers/queue-with-job.js';
import { planTarget } from './audit.js';

/** The most entries a plan holds: the bulk limit (docs/api.md, "Copy"). */
export const PLAN_MAX_ENTRIES = MANIFEST_MAX_KEYS;
/** The longest a dry run lists before it gives up (it runs in the request). */
export const PLAN_MAX_MS = 120_000;
/** Entries written per statement while listing. */
const WRITE_BATCH = 500;

export interface PlanLimits {
  maxEntries: number;
  maxMs: number;
  ttlMs: number;
}

export const DEFAULT_PLAN_LIMITS: PlanLimits = {
  maxEntries: PLAN_MAX_ENTRIES,
  maxMs: PLAN_MAX_MS,
  ttlMs: plans.PLAN_TTL_MS,
};

/** One entry as the API shows it (a copy's key, a move's from and to, a remove's path). */
export interface PlanEntryView {
  action: string;
  key?: string;
  from?: string;
  to?: string;
  path?: string;
  size?: number;
  etag?: string;
}

export interface PlanView {
  plan_id: string;
  kind: string;
  created_at: string;
  expires_at: string;
  counts: Record<string, number>;
  total: number;
  ran_at?: string;
  job_id?: string;
  transfer_id?: string;
  entries: PlanEntryView[];
  next_cursor?: string;
}

export type RunAccepted = { job_id: string; status: 'planning' } | { id: string; status: 'queued' };

export class Plans {
  readonly #limits: PlanLimits;

  constructor(
    private readonly db: Db,
    private readonly locations: Locations,
    private readonly storage: Storage,
    private readonly copies: Copies,
    private readonly operations: Operations,
    private readonly rateLimits: RateLimits,
    private readonly clock: Clock,
    limits: Partial<PlanLimits> = {},
  ) {
    this.#limits = { ...DEFAULT_PLAN_LIMITS, ...limits };
  }

  /** A dry run of a bulk copy: every object under the source prefix, to be copied. */
  async copy(
    caller: Caller,
    request: CopyRequest,
    pageLimit: number,
    audit: AuditContext,
  ): Promise<PlanView> {
    const { workspaceId } = caller;
    if (request.manifest !== undefined) throw invalid('dry_run does not take a manifest');
    const checked = await this.copies.check(caller, request);
    if (!checked.bulk) throw invalid('dry_run applies only to a bulk (prefix) copy: end "from" with "/"');
    // A dry run is a listing: it takes a place among the previews, not the copies.
    await this.rateLimits.take(workspaceId, 'preview');
    const source = checked.source;
    const prefix = checked.from;
    const storage = this.storage;
    const open: OpenStore = async () => {
      const store = storage.open(source);
      return { store, release: () => store.close() };
    };
    const filter = compileFilter(checked.filter);
    const entries = (signal: AbortSignal) =>
      actions(listedKeys(open, source.id, prefix, filter, signal), 'copy');
    const request_: PlanRequest = {
      kind: 'copy',
      source: { location_id: source.id, path: checked.from },
      destination: { location_id: checked.destination.id, path: checked.to },
      overwrite: request.overwrite ?? 'always',
      ...(checked.filter === undefined ? {} : { filter: checked.filter }),
      ...(checked.bandwidthLimit === undefined ? {} : { bandwidth_limit: checked.bandwidthLimit }),
    };
    return this.write(caller, request_, { from: request.from, to: request.to }, entries, pageLimit, audit);
  }

  /**
   * A dry run of a sync: its diff (src/engine/sync-plan.ts), each object to copy, skip (equal already) or
   * delete. Past max_delete the dry run is refused as the sync would fail (409), and no plan is kept.
   */
  async sync(
    caller: Caller,
    request: SyncRequest,
    pageLimit: number,
    audit: AuditContext,
  ): Promise<PlanView> {
    const { workspaceId } = caller;
    const checked = await this.copies.checkSync(caller, request);
    await this.rateLimits.take(workspaceId, 'preview');
    const spec = {
      source: { location_id: checked.source.id, path: checked.from },
      destination: { location_id: checked.destination.id, path: checked.to },
      options: checked.options,
    };
    const open = this.opener(caller);
    const entries = async function* (signal: AbortSignal): AsyncGenerator<PlanEntry> {
      for await (const p of syncObjects(open, spec, signal)) {
        yield {
          key: p.key,
          size: p.size,
          etag: p.etag,
          action: p.status === 'skipped' ? 'skip' : p.work !== undefined ? 'delete' : 'copy',
          ...(p.work === undefined ? {} : { work: p.work }),
        };
      }
    };
    return this.write(
      caller,
      {
        kind: 'sync',
        ...spec,
        ...(checked.bandwidthLimit === undefined ? {} : { bandwidth_limit: checked.bandwidthLimit }),
      },
      { from: request.from, to: request.to },
      entries,
      pageLimit,
      audit,
    );
  }

  /** A dry run of /move: what would be moved and where, with the worker's keys and work. */
  async move(
    caller: Caller,
    body: { from: string | string[]; to: string; literal?: boolean; filter?: FilterInput },
    pageLimit: number,
    audit: AuditContext,
  ): Promise<PlanView> {
    const spec = await this.operations.moveSpec(
      caller,
      body.from,
      body.to,
      body.literal === true,
      body.filter,
    );
    const open = this.opener(caller);
    const entries = (signal: AbortSignal) => actions(specObjects(spec, open, true, signal), 'move');
    return this.write(
      caller,
      { kind: 'move', spec },
      { from: body.from, to: body.to },
      entries,
      pageLimit,
      audit,
    );
  }

  /** A dry run of /remove: what would be removed. */
  async remove(
    caller: Caller,
    body: { path: string | string[]; literal?: boolean; filter?: FilterInput },
    pageLimit: number,
    audit: AuditContext,
  ): Promise<PlanView> {
    const spec = await this.operations.removeSpec(caller, body.path, body.literal === true, body.filter);
    const open = this.opener(caller);
    const entries = (signal: AbortSignal) => actions(specObjects(spec, open, true, signal), 'remove');
    return this.write(caller, { kind: 'remove', spec }, { from: body.path }, entries, pageLimit, audit);
  }

  /** Opens stores of the workspace's locations by id, for a dry run's listing. */
  private opener(caller: Caller): OpenStore {
    return async (locationId) => {
      const row = await this.locations.resolve(caller, { id: locationId });
      const store = this.storage.open(row);
      return { store, release: () => store.close() };
    };
  }

  /**
   * Writes a plan from its entries as they are listed, in batches, within the limits; a dry run that
   * fails (a listing error, too many entries, too long) leaves nothing behind. The plan is complete,
   * and its plan.create recorded, in one transaction. Answers its first page.
   */
  async write(
    caller: Caller,
    request: PlanRequest,
    given: plans.NewPlan['given'],
    list: (signal: AbortSignal) => AsyncIterable<PlanEntry>,
    pageLimit: number,
    audit: AuditContext,
  ): Promise<PlanView> {
    const { workspaceId } = caller;
    const { maxEntries, maxMs, ttlMs } = this.#limits;
    const id = newId();
    const q = this.db.kysely;
    await plans.create(q, { id, workspaceId, request, given }, this.clock.now(), ttlMs);
    const timer = new AbortController();
    const timeout = setTimeout(() => timer.abort(), maxMs);
    try {
      const counts: Record<string, number> = {};
      // What changes is read first, however late the listing finds it (src/lifecycle/plans.ts).
      const numbers = new plans.EntryNumbers();
      let batch: plans.StoredEntry[] = [];
      for await (const entry of list(timer.signal)) {
        if (timer.signal.aborted) throw tooLong(maxMs);
        if (numbers.count >= maxEntries) {
          throw invalid(`the plan would hold more than ${maxEntries} objects; narrow the source`);
        }
        batch.push({ ...entry, seq: numbers.next(entry.action) });
        counts[entry.action] = (counts[entry.action] ?? 0) + 1;
        if (batch.length >= WRITE_BATCH) {
          await plans.addEntries(q, id, batch);
          batch = [];
        }
      }
      await plans.addEntries(q, id, batch);
      const total = numbers.count;
      const target = await planTarget(q, { id, request, counts, total }, this.labels(caller));
      await q.transaction().execute(async (trx) => {
        await plans.complete(trx, id, counts, total);
        await record(
          trx,
          audit,
          { action: 'plan.create', target: `${request.kind} ${target}`, status: 200 },
          this.clock.now(),
        );
      });
    } catch (err) {
      await plans.discard(q, id);
      if (timer.signal.aborted && !isFerryError(err, 'invalid')) throw tooLong(maxMs);
      throw err;
    } finally {
      clearTimeout(timeout);
    }
    return this.get(caller, id, pageLimit);
  }

  private async find(caller: Caller, id: string): Promise<PlanRow> {
    const row = await plans.find(this.db.kysely, caller.workspaceId, id, withinLocations(caller));
    if (!row) throw notFound(`plan ${id} was not found`);
    return row;
  }

  /**
   * The kind of a plan of the workspace (copy, sync, move or remove) and whether its run deletes what
   * the source lacks (a sync made with `delete: true`), or undefined when there is none: what its run
   * needs of the key (docs/api.md, "Scopes").
   */
  async runOf(caller: Caller, id: string): Promise<{ kind: string; deletes: boolean } | undefined> {
    const row = await plans.find(this.db.kysely, caller.workspaceId, id, withinLocations(caller));
    if (row === undefined) return undefined;
    const request = durable.planRequest.decode(row.request, row.id);
    return { kind: row.kind, deletes: request.kind === 'sync' && request.options.delete === true };
  }

  /** The plan with a page of its entries: what changes first, then what is skipped, in listing order. */
  async get(caller: Caller, id: string, limit: number, cursor?: string): Promise<PlanView> {
    const row = await this.find(caller, id);
    const rows = await plans.entries(this.db.kysely, row.id, decodeSeqCursor(cursor), limit + 1);
    const page = pageOf(rows, limit, (last) => encodeSeqCursor(last.seq));
    const labels = await this.labels(caller);
    return {
      plan_id: row.id,
      kind: row.kind,
      created_at: new Date(row.created_at).toISOString(),
      expires_at: new Date(row.expires_at).toISOString(),
      counts: countsOf(row),
      total: Number(row.total),
      ...(row.ran_at === null ? {} : { ran_at: new Date(row.ran_at).toISOString() }),
      ...(row.job_id === null || row.transfer_id !== null ? {} : { job_id: row.job_id }),
      ...(row.transfer_id === null ? {} : { transfer_id: row.transfer_id }),
      entries: await Promise.all(page.rows.map((e) => entryView(row.id, e, labels))),
      ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
    };
  }

  /** `<label>/<path>` of a location id (the id itself when the location is gone), looked up once each. */
  private labels(caller: Caller): (locationId: string) => Promise<string> {
    const known = new Map<string, Promise<string>>();
    return (locationId) => {
      let label = known.get(locationId);
      if (label === undefined) {
        label = this.locations
          .resolve(caller, { id: locationId })
          .then((row: LocationRow) => row.label)
          .catch(() => locationId);
        known.set(locationId, label);
      }
      return label;
    };
  }

  /**
   * Runs the plan once: queues what the request without dry_run queues, naming the plan, in one
   * transaction with the plan's ran_at (a second run is 409 naming the job); 410 once expired.
   */
  async run(caller: Caller, id: string, audit: AuditContext): Promise<RunAccepted> {
    const { workspaceId } = caller;
    const row = await this.find(caller, id);
    if (row.ran_at !== null) throw ranAlready(row);
    const now = this.clock.now();
    if (row.expires_at <= now) {
      throw gone(`plan ${row.id} expired at ${new Date(row.expires_at).toISOString()}; make a new dry run`);
    }
    const request = durable.planRequest.decode(row.request, row.id);
    const given = durable.planGiven.decode(row.given, row.id);
    // The locations as they are now: deleted is 404, not active (or a token about to lapse) is 409.
    for (const locationId of locationsOf(request)) {
      const location = await this.locations.resolve(caller, { id: locationId });
      if (request.kind === 'copy' || request.kind === 'sync') checkUsable(location, now);
      else if (location.status !== 'active') {
        throw conflict(`location ${location.label} (${location.id}) is ${location.status}`);
      }
    }
    const bucket = request.kind === 'copy' || request.kind === 'sync' ? 'copy' : 'transfer';
    // The request's record, last in the transaction that starts the plan's work: the action the plan
    // performs, on what it names (./audit.ts).
    const counts = countsOf(row);
    const facts = { id: row.id, request, counts, total: Number(row.total) };
    const target = await planTarget(this.db.kysely, facts, this.labels(caller));
    const ran: AuditEntry = { action: request.kind, target, status: 202 };
    try {
      return await this.rateLimits.within(workspaceId, bucket, async (trx) => {
        if (request.kind === 'copy' || request.kind === 'sync') {
          const jobId = newId();
          if (!(await plans.ran(trx, row.id, { jobId, transferId: null }, now))) throw ranAlready(row);
          const options: JobOptions | undefined =
            request.kind === 'sync'
              ? request.options
              : request.filter === undefined
                ? undefined
                : { filter: request.filter };
          const created = await jobs.create(
            trx,
            {
              id: jobId,
              workspaceId,
              source: durable.jobSource.encode(request.source),
              destination: durable.jobDestination.encode(request.destination),
              overwrite: request.kind === 'copy' ? request.overwrite : 'always',
              manifest: undefined,
              planId: row.id,
              ...(request.kind === 'sync' ? { kind: 'sync' as const } : {}),
              ...(options === undefined ? {} : { options: durable.jobOptions.encode(options) }),
              ...(request.bandwidth_limit === undefined ? {} : { bandwidthLimit: request.bandwidth_limit }),
            },
            now,
          );
          await record(trx, audit, ran, now);
          return created;
        }
        // A plan's move or remove runs by a job even for one object, so that it is checked against the plan.
        const { queued, jobId } = await queueWithJob(trx, workspaceId, request.spec, given, now, row.id);
        if (!(await plans.ran(trx, row.id, { jobId, transferId: queued.id }, now))) throw ranAlready(row);
        await record(trx, audit, ran, now);
        return queued;
      });
    } catch (err) {
      if (!isFerryError(err, 'conflict')) throw err;
      // Run by another request meanwhile: name its work.
      throw ranAlready(await this.find(caller, id));
    }
  }
}

function tooLong(maxMs: number) {
  return invalid(`the plan took longer than ${maxMs / 1000} s to list; narrow the source`);
}

function ranAlready(row: PlanRow) {
  const by =
    row.transfer_id !== null
      ? `transfer ${row.transfer_id}`
      : row.job_id !== null
        ? `job ${row.job_id}`
        : 'a job';
  return conflict(`plan ${row.id} was run already, by ${by}; a plan runs once`);
}

function locationsOf(request: PlanRequest): string[] {
  if (request.kind === 'copy' || request.kind === 'sync')
    return [request.source.location_id, request.destination.location_id];
  const spec = request.spec;
  const refs: ObjectRef[] =
    spec.kind === 'move' ? [...spec.sources, spec.destination] : spec.kind === 'remove' ? spec.paths : [];
  return [...new Set(refs.map((ref) => ref.location_id))];
}

async function* actions(
  planned: AsyncIterable<{ key: string; size: number | null; etag: string | null; work?: string }>,
  action: string,
): AsyncGenerator<PlanEntry> {
  for await (const p of planned) yield { ...p, action };
}

/** A plan's entries counted by action (none while its dry run writes them). */
function countsOf(row: PlanRow): Record<string, number> {
  return row.counts === null ? {} : durable.planCounts.decode(row.counts, row.id);
}

async function entryView(
  planId: string,
  entry: plans.StoredEntry,
  label: (locationId: string) => Promise<string>,
): Promise<PlanEntryView> {
  const facts = {
    ...(entry.size === null ? {} : { size: entry.size }),
    ...(entry.etag === null ? {} : { etag: entry.etag }),
  };
  const work =
    entry.work === undefined ? undefined : durable.planEntryWork.decode(entry.work, `${planId}/${entry.seq}`);
  if (work?.op === 'move') {
    return {
      action: entry.action,
      from: `${await label(work.source.location_id)}/${work.source.path}`,
      to: `${await label(work.destination.location_id)}/${work.destination.path}`,
      ...facts,
    };
  }
  if (work?.op === 'remove') {
    return {
      action: entry.action,
      path: `${await label(work.source.location_id)}/${work.source.path}`,
      ...facts,
    };
  }
  return { action: entry.action, key: entry.key, ...facts };
}
