// A destination bucket that does not exist, said once (docs/api.md, "Buckets"): a bulk job fails in
// planning with one error naming the bucket and the location, instead of every object failing with
// the same not_found; a single copy that failed not_found says the same when its bucket is missing.
// A bucket counts as missing only when listing it answers not_found: a location that may write but not
// list (forbidden), or a provider failing for a passing reason, leaves the work to go on as before.
import type { JobRow } from '../db/schema.js';
import { FerryError, isFerryError } from '../errors.js';
import * as jobs from '../lifecycle/jobs.js';
import { destinationOf } from '../lifecycle/specs.js';
import { bucketWord } from '../providers.js';
import type { Store } from '../stores/contract.js';
import { splitBucketPath } from '../stores/shared/bucket-paths.js';
import type { EngineContext } from './context.js';
import type { StoreUse } from './store-cache.js';

/** The bucket of `path` when the store has buckets and that bucket does not exist. */
async function missingBucket(store: Store, path: string, signal?: AbortSignal): Promise<string | undefined> {
  if (!store.features.bucketListing) return undefined;
  const { bucket } = splitBucketPath(path);
  if (bucket === '') return undefined;
  const entries = store.list(bucket, signal ? { signal } : {})[Symbol.asyncIterator]();
  try {
    await entries.next();
    return undefined;
  } catch (err) {
    return isFerryError(err, 'not_found') ? bucket : undefined;
  } finally {
    await entries.return?.().catch(() => {});
  }
}

function missingMessage(use: Pick<StoreUse, 'row'>, bucket: string): string {
  const word = bucketWord(use.row.provider);
  return `the destination ${word} "${bucket}" does not exist on location "${use.row.label}"; create it with POST /v1/buckets`;
}

/**
 * Called once as a job's planning starts: false when the job's destination bucket does not exist, after
 * failing the job with that reason; true otherwise (planning goes on).
 */
export async function destinationReady(
  ctx: EngineContext,
  job: JobRow,
  signal: AbortSignal,
): Promise<boolean> {
  let reason: string | undefined;
  try {
    // A removal has no destination: its job's destination ref is its first path (engine/planner.ts).
    if (job.transfer_id !== null) {
      const owner = await ctx.db.kysely
        .selectFrom('transfers')
        .select('kind')
        .where('id', '=', job.transfer_id)
        .executeTakeFirst();
      if (owner?.kind === 'remove') return true;
    }
    const destination = destinationOf(job);
    reason = await ctx.stores.use(destination.location_id, async (use) => {
      const bucket = await missingBucket(use.store, destination.path, signal);
      return bucket === undefined ? undefined : missingMessage(use, bucket);
    });
  } catch {
    // An unusable location, a destination of another shape: planning itself says what is wrong.
    return true;
  }
  if (reason === undefined || signal.aborted) return true;
  ctx.logger.warn({ job: job.id, err: reason }, 'planning failed');
  await jobs.planningFailed(ctx.db.kysely, ctx.owner, job.id, `planning failed: ${reason}`, ctx.clock.now());
  ctx.wakeStreams?.();
  return false;
}

/**
 * A single copy's not_found, explained when it is the destination bucket that is missing and the
 * source is there (a missing source keeps its own words).
 */
export async function explainNotFound(
  err: unknown,
  copy: { source: Store; sourcePath: string; destination: StoreUse; destinationPath: string },
  signal: AbortSignal,
): Promise<unknown> {
  if (!isFerryError(err, 'not_found') || signal.aborted) return err;
  const bucket = await missingBucket(copy.destination.store, copy.destinationPath, signal);
  if (bucket === undefined) return err;
  const sourceThere = await copy.source.stat(copy.sourcePath, { signal }).then(
    () => true,
    () => false,
  );
  return sourceThere
    ? new FerryError('not_found', missingMessage(copy.destination, bucket), { cause: err })
    : err;
}
