// An undo job (docs/api.md, "Undo"): puts a finished job's destination back as it was, object by
// object, from what each object's work recorded it did (src/engine/backup.ts, Touched). An object the
// job created is removed; one it replaced, deleted or moved is put back from the job's backup. An object
// changed since the job (another ETag, or size, than the job wrote; one that exists again where the job
// deleted it) is left alone and reported, never overwritten.

import type { Db } from '../db/database.js';
import { objectTouched, objectWork } from '../durable/work.js';
import type { ObjectRef, ObjectWork } from '../lifecycle/specs.js';
import { copyObject } from '../objects/object-copy.js';
import type { ObjectInfo } from '../stores/contract.js';
import { changedSince, statIfPresent, stillWritten, type Touched } from './backup.js';
import type { EngineContext } from './context.js';
import type { Planned } from './planned.js';

const PAGE = 1000;

/** What an undo can put back of one object, or why not: the 409 of POST /v1/jobs/{id}/undo lists those. */
export function cannotComeBack(
  touched: Pick<Touched, 'did' | 'backup' | 'replacedLost'>,
): string | undefined {
  switch (touched.did) {
    case 'created':
      return undefined;
    case 'written':
      return 'overwritten without a backup';
    case 'replaced':
      return touched.backup === undefined ? 'overwritten without a backup' : undefined;
    case 'deleted':
      return touched.backup === undefined ? 'deleted without a backup' : undefined;
    case 'moved':
      return touched.replacedLost === true ? 'moved onto its destination without a backup' : undefined;
  }
}

/** The object's undo as a job object's work: removed again, or put back. */
export function undoOf(touched: Touched): ObjectWork {
  return touched.did === 'created' ? { op: 'unwrite', touched } : { op: 'restore', touched };
}

/**
 * The objects of an undo of `jobId`: each succeeded object of that job that touched its destination, in
 * the job's order, a page at a time (a job of 100,000 objects is never held in memory).
 */
export async function* undoObjects(db: Db, jobId: string): AsyncGenerator<Planned> {
  let after = -1;
  for (;;) {
    const page = await db.kysely
      .selectFrom('job_objects')
      .select(['seq', 'key', 'size', 'touched'])
      .where('job_id', '=', jobId)
      .where('seq', '>', after)
      .where('status', '=', 'succeeded')
      .where('touched', 'is not', null)
      .orderBy('seq')
      .limit(PAGE)
      .execute();
    for (const row of page) {
      const touched = objectTouched.decode(row.touched as string, `${jobId}/${row.seq}`);
      // A planned creation whose copy never wrote (it carries no target) has nothing to undo.
      if (touched.target === undefined) continue;
      yield {
        key: row.key,
        size: row.size,
        etag: touched.etag ?? null,
        work: objectWork.encode(undoOf(touched)),
      };
    }
    const last = page.at(-1);
    if (last === undefined || page.length < PAGE) return;
    after = last.seq;
  }
}

/** Copies `from` onto `to` (overwriting), server-side where the provider can. */
async function put(
  ctx: EngineContext,
  from: ObjectRef,
  to: ObjectRef,
  signal: AbortSignal,
  report: (bytes: number) => void,
): Promise<number> {
  return ctx.stores.use(from.location_id, (source) =>
    ctx.stores.use(to.location_id, async (destination) => {
      const outcome = await copyObject({
        source: source.store,
        sourcePath: from.path,
        destination: destination.store,
        destinationPath: to.path,
        overwrite: 'always',
        signal,
        onProgress: report,
      });
      return outcome.bytes;
    }),
  );
}

/** Whether `now` holds what the backup holds (by ETag when both have one, else by size). */
async function isBackup(
  ctx: EngineContext,
  backup: ObjectRef,
  now: ObjectInfo,
  signal: AbortSignal,
): Promise<boolean> {
  const kept = await ctx.stores.use(backup.location_id, ({ store }) =>
    statIfPresent(store, backup.path, signal),
  );
  if (kept === undefined || kept.etag === undefined || now.etag === undefined) return false;
  return stillWritten(now, { etag: kept.etag, size: kept.size });
}

/** One undo object, once; each step is safe to repeat (a repeat finds the work done or the object changed). */
export async function undoWork(
  ctx: EngineContext,
  work: Extract<ObjectWork, { op: 'unwrite' | 'restore' }>,
  signal: AbortSignal,
  report: (bytes: number) => void,
): Promise<{ bytes: number } | { reason: string }> {
  const { touched } = work;
  const now = await ctx.stores.use(touched.target.location_id, ({ store }) =>
    statIfPresent(store, touched.target.path, signal),
  );
  const remove = (ref: ObjectRef) =>
    ctx.stores.use(ref.location_id, ({ store }) => store.delete(ref.path, { signal }));
  switch (touched.did) {
    case 'created':
    case 'written': {
      if (now === undefined) return { bytes: 0 };
      if (!stillWritten(now, touched)) return { reason: changedSince(now, touched) };
      await remove(touched.target);
      return { bytes: 0 };
    }
    case 'replaced': {
      const backup = touched.backup;
      if (backup === undefined) return { reason: 'overwritten without a backup' };
      // Gone, or another object since: someone changed it after the job, and that stays.
      if (now === undefined) return { reason: 'changed since the job: gone' };
      if (!stillWritten(now, touched)) {
        // An earlier attempt of this undo put it back and stopped before it settled: done.
        if (await isBackup(ctx, backup, now, signal)) return { bytes: 0 };
        return { reason: changedSince(now, touched) };
      }
      return { bytes: await put(ctx, backup, touched.target, signal, report) };
    }
    case 'deleted': {
      const backup = touched.backup;
      if (backup === undefined) return { reason: 'deleted without a backup' };
      if (now !== undefined) {
        if (await isBackup(ctx, backup, now, signal)) return { bytes: 0 };
        return { reason: 'changed since the job: it exists again' };
      }
      return { bytes: await put(ctx, backup, touched.target, signal, report) };
    }
    case 'moved': {
      const source = touched.source;
      if (source === undefined) return { reason: 'the move recorded no source' };
      if (now === undefined) {
        // A repeat after the object went back, or someone removed it since.
        const back = await ctx.stores.use(source.location_id, ({ store }) =>
          statIfPresent(store, source.path, signal),
        );
        return back === undefined ? { reason: 'changed since the job: gone' } : { bytes: 0 };
      }
      if (!stillWritten(now, touched)) return { reason: changedSince(now, touched) };
      const there = await ctx.stores.use(source.location_id, ({ store }) =>
        statIfPresent(store, source.path, signal),
      );
      if (there !== undefined && !stillWritten(there, touched)) {
        return { reason: 'changed since the job: its source path holds another object' };
      }
      const bytes = there === undefined ? await put(ctx, touched.target, source, signal, report) : 0;
      // What the move overwrote comes back in its place; without one, the destination is removed.
      if (touched.backup !== undefined) await put(ctx, touched.backup, touched.target, signal, () => {});
      else await remove(touched.target);
      return { bytes };
    }
  }
}
