// Planning a bulk job: the manifest, or a listing of the source prefix page by page, becomes job
// objects in batches. Each batch commits with the job's planned count, so objects start copying while
// planning goes on, memory stays bounded, and a planner that dies is replaced by one that goes on
// from the start without duplicating anything (keys are unique per job).
import { setImmediate } from 'node:timers/promises';
import type { Db } from '../db/database.js';
import type { JobRow } from '../db/schema.js';
import * as durable from '../durable/work.js';
import { FerryError, isFerryError } from '../errors.js';
import * as jobs from '../lifecycle/jobs.js';
import { keyHash, releaseCopies } from '../lifecycle/object-planning.js';
import { afterFailure } from '../lifecycle/outcome.js';
import * as plans from '../lifecycle/plans.js';
import {
  decodeOptions,
  decodeSpec,
  destinationOf,
  type ObjectRef,
  type ObjectWork,
  sourceOf,
  type TransferSpec,
} from '../lifecycle/specs.js';
import * as transfers from '../lifecycle/transfers.js';
import { compileFilter, type Filter, listFiltered } from '../objects/filter.js';
import { expandSources, isPattern } from '../objects/patterns.js';
import { describe } from '../queue/backoff.js';
import type { Entry } from '../stores/contract.js';
import { backupOf, PLANNED_CREATED } from './backup.js';
import type { EngineContext } from './context.js';
import { destinationReady } from './destination-bucket.js';
import type { OpenStore, Planned } from './planned.js';
import { destinationPath } from './run-transfer.js';
import { EQUAL_PREFIX, syncObjects } from './sync-plan.js';
import { undoObjects } from './undo.js';
import { verifyObjects } from './verify-plan.js';

export const PLAN_BATCH = 1000;

/** Why a plan's run leaves alone an object its listing found and the plan did not (docs/api.md, "Plans"). */
export const NOT_IN_PLAN = 'not in the plan';

/** Why a sync plan's run skips an object the plan found equal at the destination. */
export const EQUAL_IN_PLAN = `${EQUAL_PREFIX}at the destination when planned`;

/** Writes one batch; false when the job is no longer ours to plan (canceled, or lease lost). */
function commitBatch(ctx: EngineContext, job: JobRow, seq: number, batch: Planned[]): Promise<boolean> {
  const planned = batch.map((p) => ({ ...p, keyHash: keyHash(p.key) }));
  return jobs.commitBatch(ctx.db.kysely, ctx.owner, job.id, seq, planned, ctx.clock.now()).then((ok) => {
    ctx.wakeStreams?.();
    return ok;
  });
}

async function* manifestKeys(db: Db, jobId: string): AsyncGenerator<Planned> {
  const row = await db.kysely
    .selectFrom('job_manifests')
    .select('keys')
    .where('job_id', '=', jobId)
    .executeTakeFirst();
  if (!row) throw new FerryError('internal', `job ${jobId} lost its manifest`);
  for (const key of durable.manifestKeys.decode(row.keys, jobId)) yield { key, size: null, etag: null };
}

/**
 * Every object under a prefix that passes the filter, keyed relative to it: a bulk job's planner, and a
 * copy's dry run (src/domain/plans) with the API's own store.
 */
export async function* listedKeys(
  open: OpenStore,
  locationId: string,
  prefix: string,
  filter: Filter | undefined,
  signal?: AbortSignal,
): AsyncGenerator<Planned> {
  const { store, release } = await open(locationId);
  try {
    const folder = prefix.slice(0, -1);
    for await (const entry of listFiltered(store, folder, { recursive: true, filter, signal })) {
      yield {
        key: entry.path.slice(prefix.length),
        size: entry.size,
        etag: entry.etag ?? null,
        ...(entry.hashes === undefined ? {} : { hashes: entry.hashes }),
      };
    }
  } finally {
    await release();
  }
}

/**
 * The objects of a transfer over several objects (docs/engine.md), each with its own work: every
 * file a pattern matches, each plain source as given (a missing one fails as its object, not the
 * plan), each URL of a pull. The key, unique per job, is what the failures list shows: the source's
 * path, or the URL.
 */
async function* transferObjects(ctx: EngineContext, transferId: string): AsyncGenerator<Planned> {
  const row = await ctx.db.kysely
    .selectFrom('transfers')
    .select('spec')
    .where('id', '=', transferId)
    .executeTakeFirstOrThrow();
  yield* specObjects(decodeSpec({ id: transferId, spec: row.spec }), (locationId) =>
    ctx.stores.acquire(locationId),
  );
}

/**
 * The objects of a transfer spec, as transferObjects plans them; a dry run (src/domain/plans) plans
 * with the same keys and work. With `stat`, a plain source is stat'ed (a missing one is not_found) so
 * that its size and ETag are known, as a pattern's listing knows them.
 */
export async function* specObjects(
  spec: TransferSpec,
  open: OpenStore,
  stat = false,
  signal?: AbortSignal,
): AsyncGenerator<Planned> {
  const filter = spec.kind === 'move' || spec.kind === 'remove' ? compileFilter(spec.filter) : undefined;
  const planned = (
    key: string,
    size: number | null,
    etag: string | null,
    work: ObjectWork,
    hashes?: Entry['hashes'],
  ): Planned => ({
    key,
    size,
    etag,
    ...(hashes === undefined ? {} : { hashes }),
    work: durable.objectWork.encode(work),
  });
  switch (spec.kind) {
    case 'copy':
      throw new FerryError('internal', 'a single copy has no objects to plan');
    case 'pull':
      for (const url of spec.urls)
        yield planned(url, null, null, { op: 'pull', url, destination: spec.destination });
      return;
    case 'move':
    case 'remove': {
      const sources = spec.kind === 'move' ? spec.sources : spec.paths;
      // Keys are unique per job: with sources on several locations, one path may be on two of them,
      // and both are objects of their own (a bare path would plan the second as the first, and drop it).
      const several = new Set(sources.map((ref) => ref.location_id)).size > 1;
      const keyOf = (ref: ObjectRef, path: string) => (several ? `${ref.location_id}:${path}` : path);
      for (const ref of sources) {
        if (!stat && !isPattern(ref.path, ref.literal)) {
          const name = ref.path.slice(ref.path.lastIndexOf('/') + 1);
          yield planned(keyOf(ref, ref.path), null, null, objectWork(spec, ref, { path: ref.path, name }));
          continue;
        }
        const { store, release } = await open(ref.location_id);
        try {
          for await (const entry of expandSources(store, ref.path, signal, ref.literal, filter)) {
            yield planned(
              keyOf(ref, entry.path),
              entry.size,
              entry.etag ?? null,
              objectWork(spec, ref, entry),
              // A move's copy checks its source's own hash on the first attempt, as a bulk copy's object.
              spec.kind === 'move' ? entry.hashes : undefined,
            );
          }
        } finally {
          await release();
        }
      }
    }
  }
}

/** A sync's diff (src/engine/sync-plan.ts) as the planner commits it. */
async function* syncPlanned(ctx: EngineContext, job: JobRow): AsyncGenerator<Planned> {
  const spec = {
    source: sourceOf(job),
    destination: destinationOf(job),
    options: decodeOptions(job),
  };
  for await (const p of syncObjects((id) => ctx.stores.acquire(id), spec)) {
    yield {
      key: p.key,
      size: p.size,
      etag: p.etag,
      ...(p.hashes === undefined ? {} : { hashes: p.hashes }),
      ...(p.work === undefined ? {} : { work: p.work }),
      ...(p.status === 'skipped' ? { skipped: p.reason ?? 'equal' } : {}),
      ...(p.held === undefined ? {} : { held: p.held }),
      ...(p.created === true ? { touched: PLANNED_CREATED } : {}),
    };
  }
}

/**
 * The objects of a job that runs a plan (docs/api.md, "Plans"): the plan's entries in order, each with
 * the size and ETag the plan saw (checked when it runs); then the source listed again, each key the plan
 * lacks recorded skipped, not in the plan (the plan's keys come round again and are ignored: keys are
 * unique per job). Sync's plans join here with their own listing (and the plan's filter).
 */
async function* planRunObjects(ctx: EngineContext, job: JobRow, planId: string): AsyncGenerator<Planned> {
  let after = -1;
  const options = decodeOptions(job);
  for (;;) {
    const page = await plans.entries(ctx.db.kysely, planId, after, PLAN_BATCH);
    for (const e of page) {
      const planned: Planned = {
        key: e.key,
        size: e.size,
        etag: e.etag,
        ...(e.work === undefined ? {} : { work: e.work }),
      };
      // A sync's plan (src/engine/sync-plan.ts): equal objects skipped again, with what the plan saw;
      // with delete, copies held until planned and deletions until every copy succeeded, as a sync's.
      if (job.kind === 'sync') {
        if (e.action === 'skip') planned.skipped = EQUAL_IN_PLAN;
        else if (e.action === 'delete') planned.held = 'until-copied';
        else if (options.delete === true) planned.held = 'until-planned';
      }
      yield planned;
    }
    const last = page.at(-1);
    if (last === undefined || page.length < PLAN_BATCH) break;
    after = last.seq;
  }
  const source = sourceOf(job);
  const now =
    job.transfer_id !== null
      ? transferObjects(ctx, job.transfer_id)
      : listedKeys(
          (id) => ctx.stores.acquire(id),
          source.location_id,
          source.path,
          compileFilter(options.filter),
        );
  for await (const found of now) yield { ...found, skipped: NOT_IN_PLAN };
}

function objectWork(
  spec: Extract<TransferSpec, { kind: 'move' | 'remove' }>,
  ref: ObjectRef,
  entry: Pick<Entry, 'path' | 'name'>,
): ObjectWork {
  const source = { location_id: ref.location_id, path: entry.path };
  if (spec.kind === 'remove') {
    // Kept under the transfer's backup prefix by its path below the pattern's base, or its name.
    const kept =
      spec.backup === undefined ? undefined : destinationPath({ ...spec.backup, folder: true }, ref, entry);
    return {
      op: 'remove',
      source,
      ...(spec.backup === undefined || kept === undefined
        ? {}
        : { backup: { location_id: spec.backup.location_id, path: kept } }),
    };
  }
  const path = destinationPath(spec.destination, ref, entry);
  const relative = spec.destination.folder
    ? path.slice(spec.destination.path.length)
    : path.slice(path.lastIndexOf('/') + 1);
  return {
    op: 'move',
    source,
    destination: { location_id: spec.destination.location_id, path },
    ...(spec.backup === undefined ? {} : { backup: backupOf(spec.backup, relative) }),
  };
}

export async function planJob(ctx: EngineContext, job: JobRow, signal: AbortSignal): Promise<void> {
  const { db, clock, owner } = ctx;
  // A verify writes nothing: a destination bucket that does not exist holds nothing, and each source
  // object is reported missing there (docs/api.md, "Verify"), rather than the job failing to create it.
  if (job.kind !== 'verify' && !(await destinationReady(ctx, job, signal))) return;
  const source = sourceOf(job);
  if (job.transfer_id !== null) await transfers.jobStarted(db.kysely, job.transfer_id, clock.now());
  // Already fully planned (a retry of failed objects): straight back to running.
  if (job.planning_done === 1) {
    await jobs.planningDone(db.kysely, owner, job.id, clock.now());
    await jobs.finishIfDone(db.kysely, job.id, clock.now());
    return;
  }
  try {
    const keys =
      job.kind === 'undo' && job.undo_of !== null
        ? undoObjects(ctx.db, job.undo_of)
        : job.plan_id !== null
          ? planRunObjects(ctx, job, job.plan_id)
          : job.transfer_id !== null
            ? transferObjects(ctx, job.transfer_id)
            : job.kind === 'sync'
              ? syncPlanned(ctx, job)
              : job.kind === 'verify'
                ? verifyObjects((id) => ctx.stores.acquire(id), {
                    source,
                    destination: destinationOf(job),
                    options: decodeOptions(job),
                  })
                : job.has_manifest === 1
                  ? manifestKeys(db, job.id)
                  : listedKeys(
                      (id) => ctx.stores.acquire(id),
                      source.location_id,
                      source.path,
                      compileFilter(decodeOptions(job).filter),
                    );
    // After a planner died, keys it committed come round again and are ignored (unique per job); new
    // sequence numbers start past every committed one, so listing order need not be stable.
    let seq = job.planned_count;
    let batch: Planned[] = [];
    for await (const planned of keys) {
      if (signal.aborted) return;
      batch.push(planned);
      if (batch.length >= PLAN_BATCH) {
        if (!(await commitBatch(ctx, job, seq, batch))) return;
        seq += batch.length;
        batch = [];
        // better-sqlite3 is synchronous and a manifest is in memory: without this the whole plan would
        // run in one turn of the event loop, and the HTTP server in this process would wait for it.
        await setImmediate();
      }
    }
    if (!(await commitBatch(ctx, job, seq, batch))) return;
    // A transfer whose patterns matched nothing did nothing that was asked (docs/api.md, "Move, remove, pull").
    if (job.transfer_id !== null && seq + batch.length === 0) {
      throw new FerryError('not_found', 'no object matched the sources');
    }
    // A sync's copies held while it planned: its deletions are within max_delete, they may run.
    if (job.kind === 'sync') await releaseCopies(db.kysely, job.id);
    await jobs.planningDone(db.kysely, owner, job.id, clock.now());
    await jobs.finishIfDone(db.kysely, job.id, clock.now());
  } catch (err) {
    if (signal.aborted) return;
    const now = clock.now();
    const settlement = afterFailure(err, job.planning_attempts, clock);
    if (settlement.kind === 'again') {
      await jobs.planningBackoff(db.kysely, owner, job.id, settlement.error, settlement.runAfter, now);
      return;
    }
    const message =
      isFerryError(err, 'not_found') && job.transfer_id !== null
        ? err.message
        : isFerryError(err, 'not_found')
          ? `the source prefix ${source.path} was not found: ${err.message}`
          : describe(err);
    ctx.logger.warn({ job: job.id, err: message }, 'planning failed');
    await jobs.planningFailed(db.kysely, owner, job.id, `planning failed: ${message}`, now);
  }
}
