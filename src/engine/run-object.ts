// One object of a bulk job: copy <source prefix><key> to <destination prefix><key>, record the outcome
// if we still hold the lease, and finish the job when it was the last one.
import type { Db } from '../db/database.js';
import type { JobObjectRow } from '../db/schema.js';
import type { Clock } from '../domain/clock.js';
import { decodeRef, type ObjectRef } from '../domain/transfers/specs.js';
import type { Logger } from '../log.js';
import { copyObject, type Overwrite } from '../objects/object-copy.js';
import type { ObjectInfo } from '../stores/contract.js';
import { backoffMs, describe, MAX_ATTEMPTS, retryable } from './backoff.js';
import { finishJobIfDone } from './finish.js';
import { ProgressWriter } from './progress.js';
import type { StoreCache } from './store-cache.js';

export interface EngineContext {
  db: Db;
  clock: Clock;
  logger: Logger;
  stores: StoreCache;
  owner: string;
}

interface JobPlan {
  source: ObjectRef;
  destination: ObjectRef;
  overwrite: Overwrite;
}

const plans = new Map<string, JobPlan>();

export async function planOf(ctx: EngineContext, jobId: string): Promise<JobPlan> {
  const known = plans.get(jobId);
  if (known) return known;
  const job = await ctx.db.kysely
    .selectFrom('jobs')
    .select(['source', 'destination', 'overwrite'])
    .where('id', '=', jobId)
    .executeTakeFirstOrThrow();
  const plan = {
    source: decodeRef(job.source),
    destination: decodeRef(job.destination),
    overwrite: job.overwrite,
  };
  if (plans.size > 1000) plans.clear();
  plans.set(jobId, plan);
  return plan;
}

function listedInfo(plan: JobPlan, object: JobObjectRow, size: number): ObjectInfo {
  const info: ObjectInfo = { path: plan.source.path + object.key, size, hashes: {} };
  if (object.source_etag !== null) info.etag = object.source_etag;
  return info;
}

export async function runObject(
  ctx: EngineContext,
  object: JobObjectRow,
  signal: AbortSignal,
): Promise<void> {
  const { db, clock, owner } = ctx;
  const mine = () =>
    db.kysely
      .updateTable('job_objects')
      .where('job_id', '=', object.job_id)
      .where('seq', '=', object.seq)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running');
  const progress = new ProgressWriter(clock, async (bytes) => {
    await mine().set({ bytes_done: bytes }).execute();
  });
  try {
    const plan = await planOf(ctx, object.job_id);
    const outcome = await ctx.stores.use(plan.source.location_id, (source) =>
      ctx.stores.use(plan.destination.location_id, (destination) =>
        copyObject({
          source: source.store,
          sourcePath: plan.source.path + object.key,
          destination: destination.store,
          destinationPath: plan.destination.path + object.key,
          overwrite: plan.overwrite,
          // What the listing reported saves a stat per object. Manifest keys have nothing and are stat'ed,
          // and so is a retried object, whose source may have changed since it was listed.
          ...(object.size === null || object.attempts > 1
            ? {}
            : { sourceInfo: listedInfo(plan, object, object.size) }),
          signal,
          onProgress: (bytes) => progress.report(bytes),
        }),
      ),
    );
    await progress.flush();
    await mine()
      .set({
        status: outcome.action === 'skipped' ? 'skipped' : 'succeeded',
        bytes_done: outcome.bytes,
        size: outcome.bytes,
        error: null,
        lease_owner: null,
        lease_expires_at: null,
      })
      .execute();
  } catch (err) {
    progress.stop();
    if (signal.aborted) return; // handed back or canceled: the caller decides what the row becomes
    const now = clock.now();
    if (retryable(err) && object.attempts < MAX_ATTEMPTS) {
      await mine()
        .set({
          status: 'pending',
          error: describe(err),
          run_after: now + backoffMs(object.attempts, err),
          lease_owner: null,
          lease_expires_at: null,
        })
        .execute();
      return;
    }
    ctx.logger.warn({ job: object.job_id, seq: object.seq, err: describe(err) }, 'object failed');
    await mine()
      .set({ status: 'failed', error: describe(err), lease_owner: null, lease_expires_at: null })
      .execute();
  }
  await finishJobIfDone(db, object.job_id, clock.now());
}
