// One object of a bulk job: copy <source prefix><key> to <destination prefix><key>, settle the object
// (src/lifecycle/object-settlement.ts) and finish the job when it was the last one. An object of a job
// that runs a transfer over several objects carries its own work instead (move, remove or pull, with
// its full source and destination), and runs it the same way.

import type { JobObjectRow } from '../db/schema.js';
import { objectSourceHashes } from '../durable/work.js';
import { isFerryError } from '../errors.js';
import type { ObjectSettlement } from '../lifecycle/object-settlement.js';
import * as objects from '../lifecycle/objects.js';
import type { Settlement } from '../lifecycle/outcome.js';
import {
  decodeOptions,
  destinationOf,
  type ObjectRef,
  type ObjectWork,
  sourceOf,
  workOf,
} from '../lifecycle/specs.js';
import { openUrl } from '../objects/fetch-url.js';
import { copyObject } from '../objects/object-copy.js';
import { moveObject } from '../objects/object-move.js';
import { verifyObject } from '../objects/object-verify.js';
import { type Throttle, throttled } from '../objects/throttle.js';
import { DEFAULT_CRASH_POLICY } from '../queue/backoff.js';
import type { Overwrite, Verdict } from '../states.js';
import type { HashKind, ObjectInfo, Store } from '../stores/contract.js';
import { type AttemptArgs, attempt } from './attempt.js';
import { backupOf, keepBefore, PLANNED_CREATED, type Touched } from './backup.js';
import { abandonUpload, checkpointOf, JOB_CANCELED, type Work } from './checkpoints.js';
import type { EngineContext } from './context.js';
import { settleObjects } from './settle-batch.js';
import { undoWork } from './undo.js';

/** What every object of a job needs from its row, read once per job and kept (at most 1000 jobs). */
interface JobPlan {
  source: ObjectRef;
  destination: ObjectRef;
  overwrite: Overwrite;
  /** The plan the job runs (docs/api.md, "Plans"): each object is checked against it first. */
  planId: string | null;
  workspaceId: string;
  /** The job's own cap in bytes per second (docs/api.md, "Bandwidth"), or null. */
  bandwidthLimit: number | null;
  /** Where what the job overwrites is kept, `<prefix>/<job id>/` (docs/api.md, "Undo"). */
  backup: ObjectRef | undefined;
}

const plans = new Map<string, JobPlan>();

export async function planOf(ctx: EngineContext, jobId: string): Promise<JobPlan> {
  const known = plans.get(jobId);
  if (known) return known;
  const job = await ctx.db.kysely
    .selectFrom('jobs')
    .select(['source', 'destination', 'overwrite', 'plan_id', 'workspace_id', 'bandwidth_limit', 'options'])
    .where('id', '=', jobId)
    .executeTakeFirstOrThrow();
  const plan = {
    source: sourceOf({ id: jobId, source: job.source }),
    destination: destinationOf({ id: jobId, destination: job.destination }),
    overwrite: job.overwrite,
    planId: job.plan_id,
    workspaceId: job.workspace_id,
    bandwidthLimit: job.bandwidth_limit,
    backup: decodeOptions({ id: jobId, options: job.options }).backup,
  };
  if (plans.size > 1000) plans.clear();
  plans.set(jobId, plan);
  return plan;
}

/** The caps a job's objects wait for (the job's own and its workspace's), or undefined for none. */
async function throttleOf(ctx: EngineContext, jobId: string): Promise<Throttle | undefined> {
  if (ctx.bandwidth === undefined) return undefined;
  const plan = await planOf(ctx, jobId);
  return ctx.bandwidth.throttleFor({
    workspaceId: plan.workspaceId,
    key: `job:${jobId}`,
    limit: plan.bandwidthLimit,
  });
}

/**
 * The source of an object as its listing gave it: size, ETag and hashes, so that its first attempt
 * needs no stat and still checks the source's own hash against the bytes it reads (docs/api.md,
 * "Verification").
 */
function listedInfo(path: string, object: JobObjectRow, size: number): ObjectInfo {
  const info: ObjectInfo = {
    path,
    size,
    hashes:
      object.source_hashes === null
        ? {}
        : objectSourceHashes.decode(object.source_hashes, `${object.job_id}/${object.seq}`),
  };
  if (object.source_etag !== null) info.etag = object.source_etag;
  return info;
}

/** An object a plan's run leaves alone, and why (docs/api.md, "Plans"). */
interface LeftAlone {
  reason: string;
}

/**
 * A plan's object before it runs: its source as it is now (a stat, never the listing), or why it is
 * left alone: gone, or another size or ETag than the plan saw. Undefined on a later attempt that finds
 * the source gone, which an earlier attempt of this object may have moved or removed: the work decides.
 */
async function checkPlanned(
  store: Store,
  path: string,
  object: JobObjectRow,
  signal: AbortSignal,
): Promise<ObjectInfo | LeftAlone | undefined> {
  let info: ObjectInfo;
  try {
    info = await store.stat(path, { signal });
  } catch (err) {
    if (!isFerryError(err, 'not_found')) throw err;
    return object.attempts > 1 ? undefined : { reason: 'changed since the plan: gone' };
  }
  if (object.size !== null && info.size !== object.size) {
    return { reason: `changed since the plan: size ${object.size} → ${info.size}` };
  }
  if (object.source_etag !== null && info.etag !== undefined && info.etag !== object.source_etag) {
    return { reason: `changed since the plan: ETag ${object.source_etag} → ${info.etag}` };
  }
  return info;
}

function leftAlone(checked: ObjectInfo | LeftAlone | undefined): checked is LeftAlone {
  return checked !== undefined && 'reason' in checked;
}

/**
 * One attempt on an object (src/engine/attempt.ts), with the counts its row holds and its progress
 * written under its lease; undefined when aborted.
 */
function attemptObject<T>(
  ctx: EngineContext,
  object: JobObjectRow,
  signal: AbortSignal,
  run: Pick<AttemptArgs<T>, 'work' | 'done'>,
): Promise<Settlement | undefined> {
  const { db, clock, owner } = ctx;
  return attempt({
    clock,
    signal,
    attempts: object.attempts,
    crashes: { count: object.crashes, policy: ctx.crashes ?? DEFAULT_CRASH_POLICY },
    progress: (bytes) => objects.progress(db.kysely, owner, object, bytes).then(() => ctx.wakeStreams?.()),
    ...run,
  });
}

/** Writes how an attempt settled (nothing when it was aborted), saying so in the log when it failed. */
async function settled(
  ctx: EngineContext,
  object: JobObjectRow,
  settlement: Settlement | undefined,
  settle: SettleObject,
): Promise<void> {
  if (settlement === undefined) return;
  if (settlement.kind === 'failed') {
    ctx.logger.warn({ job: object.job_id, seq: object.seq, err: settlement.error }, 'object failed');
  }
  await settle({ object, settlement });
}

/** Writes an object's settlement (and finishes its job when it was the last): false when the lease was lost. */
export type SettleObject = (item: ObjectSettlement) => Promise<boolean>;

export async function runObject(
  ctx: EngineContext,
  object: JobObjectRow,
  signal: AbortSignal,
  // The worker passes its SettleBatcher; alone, an object is a batch of one.
  settle: SettleObject = async (item) =>
    (await settleObjects(ctx.db, ctx.clock, ctx.owner, [item]))[0] === true,
): Promise<void> {
  const { db, clock, owner } = ctx;
  const own = workOf(object);
  if (own !== null) {
    await runWork(ctx, object, own, signal, settle);
    return;
  }
  const plan = await planOf(ctx, object.job_id);
  const throttle = await throttleOf(ctx, object.job_id);
  const work: Work = { kind: 'object', jobId: object.job_id, seq: object.seq };
  const checkpoint = checkpointOf(db.kysely, work, owner, () => clock.now());
  const settlement = await attemptObject(ctx, object, signal, {
    work: (report) =>
      ctx.stores.use(plan.source.location_id, async (source) => {
        const sourcePath = plan.source.path + object.key;
        const checked =
          plan.planId === null ? undefined : await checkPlanned(source.store, sourcePath, object, signal);
        if (leftAlone(checked)) return checked;
        const target = {
          location_id: plan.destination.location_id,
          path: plan.destination.path + object.key,
        };
        // What was there is kept before it is overwritten (docs/api.md, "Undo"); if-missing overwrites nothing.
        const backup =
          plan.backup !== undefined && plan.overwrite === 'always'
            ? backupOf(plan.backup, object.key)
            : undefined;
        const before = backup === undefined ? undefined : await keepBefore(ctx, target, backup, signal);
        const outcome = await ctx.stores.use(plan.destination.location_id, (destination) =>
          copyObject({
            source: source.store,
            sourcePath,
            destination: destination.store,
            destinationPath: target.path,
            overwrite: plan.overwrite,
            // What the listing reported (size, ETag, hashes) saves a stat per object. Manifest keys have nothing and are
            // stat'ed, and so is a retried object, whose source may have changed since it was listed.
            // A plan's object was just stat'ed against the plan.
            ...(checked !== undefined
              ? { sourceInfo: checked }
              : object.size === null || object.attempts > 1 || plan.planId !== null
                ? {}
                : { sourceInfo: listedInfo(sourcePath, object, object.size) }),
            signal,
            onProgress: report,
            checkpoint,
            ...(throttle === undefined ? {} : { throttle }),
          }),
        );
        if (outcome.action === 'skipped') return outcome;
        const did: Touched['did'] =
          before === 'kept'
            ? 'replaced'
            : before === 'absent' || plan.overwrite === 'if-missing' || object.touched === PLANNED_CREATED
              ? 'created'
              : 'written';
        const touched: Touched = {
          did,
          target,
          ...(did === 'replaced' && backup !== undefined ? { backup } : {}),
          ...(outcome.etag === undefined ? {} : { etag: outcome.etag }),
          size: outcome.bytes,
        };
        return { ...outcome, touched };
      }),
    done: (outcome) =>
      'reason' in outcome
        ? { kind: 'done', bytes: 0, skipped: true, reason: outcome.reason }
        : {
            kind: 'done',
            bytes: outcome.bytes,
            skipped: outcome.action === 'skipped',
            ...(outcome.checksums === undefined ? {} : { checksums: outcome.checksums }),
            ...(outcome.verified === undefined ? {} : { verified: outcome.verified }),
            ...('touched' in outcome ? { touched: outcome.touched } : {}),
          },
  });
  // A canceled job's object, or one that failed for good, leaves no multipart upload behind. One
  // handed back on shutdown or tried again later keeps it, for the next attempt to continue.
  const abandon = settlement === undefined ? signal.reason === JOB_CANCELED : settlement.kind === 'failed';
  if (abandon) {
    await ctx.stores
      .use(plan.destination.location_id, ({ store }) =>
        abandonUpload(db.kysely, work, owner, store, settlement === undefined ? 'checkpoint' : 'lease'),
      )
      .catch((err: unknown) =>
        ctx.logger.warn({ job: object.job_id, seq: object.seq, err }, 'upload not aborted'),
      );
  }
  await settled(ctx, object, settlement, settle);
}

/** What one object of a transfer over several objects does, once (each op is safe to repeat). */
async function doWork(
  ctx: EngineContext,
  object: JobObjectRow,
  work: ObjectWork,
  signal: AbortSignal,
  report: (bytes: number) => void,
  throttle: Throttle | undefined,
): Promise<
  | {
      bytes: number;
      checksums?: { source: string; destination: string };
      verified?: HashKind[];
      /** A verify's: what it found, how, and the object's size (src/objects/object-verify.ts). */
      found?: { verdict: Verdict; reason: string; size: number };
      touched?: Touched;
    }
  | LeftAlone
> {
  const planned = (await planOf(ctx, object.job_id)).planId !== null;
  switch (work.op) {
    case 'move':
      // Copied, verified, and only then the source removed (src/objects/object-move.ts), so a
      // process killed mid-move loses nothing; a repeat after the delete finds the move done.
      return ctx.stores.use(
        work.source.location_id,
        async (source): Promise<{ bytes: number; touched?: Touched } | LeftAlone> => {
          const checked = planned
            ? await checkPlanned(source.store, work.source.path, object, signal)
            : undefined;
          if (leftAlone(checked)) return checked;
          // What the move overwrites is kept first (docs/api.md, "Undo").
          const before =
            work.backup === undefined
              ? undefined
              : await keepBefore(ctx, work.destination, work.backup, signal);
          const moved = await ctx.stores.use(work.destination.location_id, (destination) =>
            moveObject({
              source: source.store,
              sourcePath: work.source.path,
              destination: destination.store,
              destinationPath: work.destination.path,
              // As a bulk copy's objects (runObject): the listing's size, ETag and hashes save a stat on the
              // first attempt; a retried object is stat'ed, its source may have changed since. A plan's
              // object was just stat'ed against the plan.
              ...(checked !== undefined
                ? { sourceInfo: checked }
                : object.size === null || object.attempts > 1 || planned
                  ? {}
                  : { sourceInfo: listedInfo(work.source.path, object, object.size) }),
              signal,
              onProgress: report,
              ...(throttle === undefined ? {} : { throttle }),
            }),
          );
          const touched: Touched = {
            did: 'moved',
            source: work.source,
            target: work.destination,
            ...(before === 'kept' && work.backup !== undefined ? { backup: work.backup } : {}),
            // Without a backup it is not known whether it replaced an object, which cannot come back.
            ...(before === undefined ? { replacedLost: true as const } : {}),
            ...(moved.etag === undefined ? {} : { etag: moved.etag }),
            size: moved.bytes,
          };
          return { ...moved, touched };
        },
      );
    case 'remove':
      return ctx.stores.use(
        work.source.location_id,
        async ({ store }): Promise<{ bytes: number; touched?: Touched } | LeftAlone> => {
          if (planned) {
            const checked = await checkPlanned(store, work.source.path, object, signal);
            if (leftAlone(checked)) return checked;
          }
          // Kept first when the transfer has a backup (docs/api.md, "Undo"): a failed backup removes nothing.
          if (work.backup !== undefined) await keepBefore(ctx, work.source, work.backup, signal);
          try {
            await store.stat(work.source.path, { signal });
            await store.delete(work.source.path, { signal });
          } catch (err) {
            // Gone since an earlier attempt of this object removed it: what was asked for holds.
            if (!(isFerryError(err, 'not_found') && object.attempts > 1)) throw err;
          }
          return { bytes: 0, touched: deletedAt(work.source, work.backup) };
        },
      );
    case 'delete':
      // A sync's deletion (docs/api.md, "Sync"): gone already is what was asked for. A plan's deletion
      // is left alone when the destination object changed since the plan.
      return ctx.stores.use(
        work.target.location_id,
        async ({ store }): Promise<{ bytes: number; touched?: Touched } | LeftAlone> => {
          if (planned) {
            const checked = await checkPlanned(store, work.target.path, object, signal);
            if (leftAlone(checked)) return checked;
          }
          const kept =
            work.backup === undefined ? undefined : await keepBefore(ctx, work.target, work.backup, signal);
          try {
            await store.delete(work.target.path, { signal });
          } catch (err) {
            if (!isFerryError(err, 'not_found')) throw err;
          }
          // Nothing there and nothing kept: the deletion changed nothing an undo could put back.
          if (kept === 'absent') return { bytes: 0 };
          return { bytes: 0, touched: deletedAt(work.target, work.backup) };
        },
      );
    case 'verify':
      // Reads, never writes (docs/api.md, "Verify"): safe to repeat, and a plan has none.
      return ctx.stores.use(work.source.location_id, (source) =>
        ctx.stores.use(work.destination.location_id, async (destination) => {
          const outcome = await verifyObject({
            source: source.store,
            sourcePath: work.source.path,
            destination: destination.store,
            destinationPath: work.destination.path,
            mode: work.mode,
            signal,
            onProgress: report,
          });
          return {
            bytes: outcome.bytes,
            ...(outcome.checksums === undefined ? {} : { checksums: outcome.checksums }),
            found: { verdict: outcome.verdict, reason: outcome.reason, size: outcome.size },
          };
        }),
      );
    case 'pull': {
      const egress = ctx.egress;
      if (egress === undefined) throw new Error('a pull needs the egress rules');
      return ctx.stores.use(work.destination.location_id, async ({ store }) => {
        const fetched = await openUrl(work.url, egress, {
          signal,
          ...(ctx.outbound === undefined ? {} : { timeouts: ctx.outbound }),
        });
        const path = work.destination.folder ? work.destination.path + fetched.name : work.destination.path;
        const info = await store.write(path, throttled(fetched.body, throttle, signal), {
          signal,
          ...(fetched.size === undefined ? {} : { size: fetched.size }),
          ...(fetched.mimeType === undefined ? {} : { mimeType: fetched.mimeType }),
          onProgress: report,
        });
        return { bytes: info.size, verified: info.verified ?? [] };
      });
    }
    case 'unwrite':
    case 'restore':
      return undoWork(ctx, work, signal, report);
  }
}

/** A removal's record for an undo: the object, and where it was kept when the job had a backup. */
function deletedAt(target: ObjectRef, backup: ObjectRef | undefined): Touched {
  return { did: 'deleted', target, ...(backup === undefined ? {} : { backup }) };
}

async function runWork(
  ctx: EngineContext,
  object: JobObjectRow,
  work: ObjectWork,
  signal: AbortSignal,
  settle: SettleObject,
): Promise<void> {
  const throttle = await throttleOf(ctx, object.job_id);
  const settlement = await attemptObject(ctx, object, signal, {
    work: (report) => doWork(ctx, object, work, signal, report, throttle),
    done: (outcome) =>
      'reason' in outcome
        ? { kind: 'done', bytes: 0, skipped: true, reason: outcome.reason }
        : {
            kind: 'done',
            bytes: outcome.bytes,
            skipped: false,
            deleted: work.op === 'delete',
            ...(outcome.found === undefined
              ? {}
              : {
                  verdict: outcome.found.verdict,
                  reason: outcome.found.reason,
                  bytesTotal: outcome.found.size,
                }),
            ...(outcome.checksums === undefined ? {} : { checksums: outcome.checksums }),
            ...(outcome.verified === undefined ? {} : { verified: outcome.verified }),
            ...(outcome.touched === undefined ? {} : { touched: outcome.touched }),
          },
  });
  await settled(ctx, object, settlement, settle);
}
