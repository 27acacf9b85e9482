// Nothing replaced is lost (docs/api.md, "Undo"): before a job's work deletes or overwrites an object
// and the job has `backup_to`, the object is copied (server-side where the provider can) to
// `<backup prefix>/<job id>/<its path under the job's prefix>`; only then does the work go on. What the
// work did at its destination is written with the object (`touched`), for an undo to read
// (src/engine/undo.ts). A backup that fails fails the object's attempt, so nothing is deleted or
// overwritten without it.
import { objectTouched, type Touched } from '../durable/work.js';
import { FerryError, isFerryError } from '../errors.js';
import type { ObjectRef } from '../lifecycle/specs.js';
import { copyObject } from '../objects/object-copy.js';
import type { ObjectInfo, Store } from '../stores/contract.js';
import type { EngineContext } from './context.js';

// What the work did (src/durable/work.ts, Touched: the column's schema, where the shape is declared).
export type { Touched };

/** What the planner knows of a sync's copy before it runs: nothing was at the destination. */
export const PLANNED_CREATED = objectTouched.encode({ did: 'created' });

/** A job's backup prefix with its id: `<prefix>/<job id>/` (the prefix given, with or without its `/`). */
export function jobBackup(backup: ObjectRef, jobId: string): ObjectRef {
  const prefix = backup.path === '' || backup.path.endsWith('/') ? backup.path : `${backup.path}/`;
  return { location_id: backup.location_id, path: `${prefix}${jobId}/` };
}

/** Where one object is kept: the job's backup prefix and the object's path under the job's prefix. */
export function backupOf(jobBackupRef: ObjectRef, relative: string): ObjectRef {
  return { location_id: jobBackupRef.location_id, path: jobBackupRef.path + relative };
}

/** A stat that answers undefined for a missing object. */
export async function statIfPresent(
  store: Store,
  path: string,
  signal: AbortSignal,
): Promise<ObjectInfo | undefined> {
  try {
    return await store.stat(path, { signal });
  } catch (err) {
    if (isFerryError(err, 'not_found')) return undefined;
    throw err;
  }
}

/**
 * Keeps `target` at `backup` before the work replaces or deletes it: `absent` when there is nothing to
 * keep, `kept` when the backup holds it. A backup already there was written by an earlier attempt of
 * this object (the path holds the job's id), and is never written again: a repeat after the work had
 * overwritten the target would otherwise keep what the job wrote in place of what was there.
 */
export async function keepBefore(
  ctx: EngineContext,
  target: ObjectRef,
  backup: ObjectRef,
  signal: AbortSignal,
): Promise<'absent' | 'kept'> {
  return ctx.stores.use(backup.location_id, async (kept) => {
    if ((await statIfPresent(kept.store, backup.path, signal)) !== undefined) return 'kept';
    return ctx.stores.use(target.location_id, async (at) => {
      const info = await statIfPresent(at.store, target.path, signal);
      if (info === undefined) return 'absent';
      try {
        await copyObject({
          source: at.store,
          sourcePath: target.path,
          destination: kept.store,
          destinationPath: backup.path,
          overwrite: 'always',
          sourceInfo: info,
          signal,
        });
      } catch (err) {
        // The attempt fails (tried again when passing) and the object is neither deleted nor overwritten.
        const kind = isFerryError(err) ? err.kind : 'transient';
        const why = err instanceof Error ? err.message : String(err);
        throw new FerryError(kind, `backup of ${target.path} to ${backup.path} failed: ${why}`, {
          cause: err,
        });
      }
      return 'kept';
    });
  });
}

/** Whether an object is still what the job wrote: the ETag when both are known, else the size. */
export function stillWritten(info: ObjectInfo, touched: Pick<Touched, 'etag' | 'size'>): boolean {
  const bare = (etag: string) => etag.replace(/^W\//, '').replaceAll('"', '');
  if (touched.etag !== undefined && info.etag !== undefined) return bare(touched.etag) === bare(info.etag);
  return touched.size === undefined || touched.size === info.size;
}

/** How an object changed since the job wrote it, for the undo's report. */
export function changedSince(info: ObjectInfo, touched: Pick<Touched, 'etag' | 'size'>): string {
  if (touched.etag !== undefined && info.etag !== undefined) {
    return `changed since the job: ETag ${touched.etag} → ${info.etag}`;
  }
  return `changed since the job: size ${touched.size} → ${info.size}`;
}
