// Planning a bulk job: the manifest, or a listing of the source prefix page by page, becomes job
// objects in batches. Each batch commits with the job's planned count, so objects start copying while
// planning goes on, memory stays bounded, and a planner that dies is replaced by one that goes on
// from the start without duplicating anything (keys are unique per job).
import { setImmediate } from 'node:timers/promises';
import type { Db } from '../db/database.js';
import type { JobRow } from '../db/schema.js';
import { keyHash } from '../domain/transfers/copy.js';
import { decodeRef } from '../domain/transfers/specs.js';
import { FerryError, isFerryError } from '../errors.js';
import { describe } from './backoff.js';
import { destinationReady } from './destination-bucket.js';
import * as jobs from './lifecycle/jobs.js';
import { afterFailure } from './outcome.js';
import type { EngineContext } from './run-object.js';

export const PLAN_BATCH = 1000;

interface Planned {
  key: string;
  size: number | null;
  etag: string | null;
}

/** Writes one batch; false when the job is no longer ours to plan (canceled, or lease lost). */
function commitBatch(ctx: EngineContext, job: JobRow, seq: number, batch: Planned[]): Promise<boolean> {
  const planned = batch.map((p) => ({ ...p, keyHash: keyHash(p.key) }));
  return jobs.commitBatch(ctx.db.kysely, ctx.owner, job.id, seq, planned, ctx.clock.now()).then((ok) => {
    ctx.changed?.();
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
  for (const key of JSON.parse(row.keys) as string[]) yield { key, size: null, etag: null };
}

async function* listedKeys(ctx: EngineContext, locationId: string, prefix: string): AsyncGenerator<Planned> {
  const { store, release } = await ctx.stores.acquire(locationId);
  try {
    const folder = prefix.slice(0, -1);
    for await (const entry of store.list(folder, { recursive: true })) {
      if (entry.isDir) continue;
      yield { key: entry.path.slice(prefix.length), size: entry.size, etag: entry.etag ?? null };
    }
  } finally {
    release();
  }
}

export async function planJob(ctx: EngineContext, job: JobRow, signal: AbortSignal): Promise<void> {
  const { db, clock, owner } = ctx;
  if (!(await destinationReady(ctx, job, signal))) return;
  const source = decodeRef(job.source);
  // Already fully planned (a retry of failed objects): straight back to running.
  if (job.planning_done === 1) {
    await jobs.planningDone(db.kysely, owner, job.id, clock.now());
    await jobs.finishIfDone(db.kysely, job.id, clock.now());
    return;
  }
  try {
    const keys =
      job.has_manifest === 1 ? manifestKeys(db, job.id) : listedKeys(ctx, source.location_id, source.path);
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
    const message = isFerryError(err, 'not_found')
      ? `the source prefix ${source.path} was not found: ${err.message}`
      : describe(err);
    ctx.logger.warn({ job: job.id, err: message }, 'planning failed');
    await jobs.planningFailed(db.kysely, owner, job.id, `planning failed: ${message}`, now);
  }
}
