// Moving one object (docs/api.md, "Move, remove, pull": afterwards the file exists only at the
// destination), after rclone's operations.Move: the destination's native move when both stores share
// provider and account, else copyObject (which verifies) followed by deleting the source. The
// fallback lives here, never in a store: stores offer a native move as a capability, nothing more.
//
// Retries. The queue may run a move again after a crash, and a move is not atomic across stores, so
// each step is safe to repeat:
// - crashed before or during the copy: the source is still there; the copy runs again (overwrite
//   always) and replaces any partial or complete destination object;
// - crashed after the copy, before the delete: the source is still there; the copy runs again, then
//   the delete;
// - crashed after the delete (or a native move that completed but whose answer was lost): the source
//   is gone and the destination is present, and the move counts as done.
// "Source missing and destination present" cannot tell a finished move from a source that never
// existed beside a destination that did; we take it as finished (that is what a repeat must see), and
// report the destination's size. Only a missing source with a missing destination is not_found.
import { FerryError, isFerryError } from '../errors.js';
import type { CallOptions, HashKind, ObjectInfo, Store } from '../stores/contract.js';
import { copyObject } from './object-copy.js';
import type { Throttle } from './throttle.js';
import { type ComparedChecksums, sameAccount, sameObject } from './verify.js';

export interface MoveObjectArgs {
  source: Store;
  sourcePath: string;
  destination: Store;
  destinationPath: string;
  signal?: AbortSignal;
  /** Cumulative bytes moved so far (the copy's progress; a native move reports its size once). */
  onProgress?: (bytesDone: number) => void;
  /**
   * What a listing just reported of the source, which saves its stat; a source gone since is found by
   * the copy (not_found), and handled as a missing source is.
   */
  sourceInfo?: ObjectInfo;
  /** The bandwidth cap a streamed copy waits for (src/objects/throttle.ts); a native move has no bytes to cap. */
  throttle?: Throttle;
}

export interface MoveOutcome {
  /** 'server-side': the provider's own move; 'copy-delete': a (server-side or streamed) copy, then delete. */
  method: 'server-side' | 'copy-delete';
  bytes: number;
  /** The checksums a copy-delete's copy compared (a native move compares nothing). */
  checksums?: ComparedChecksums;
  /** What proved a copy-delete's copy (CopyOutcome.verified); absent when no bytes were written. */
  verified?: HashKind[];
  /** The destination's ETag as the move or its copy reported it, when known (an undo compares it). */
  etag?: string;
}

export async function moveObject(args: MoveObjectArgs): Promise<MoveOutcome> {
  const { source, sourcePath, destination, destinationPath, signal } = args;
  const what = `move ${sourcePath} to ${destinationPath}`;
  const opts: CallOptions = signal === undefined ? {} : { signal };
  if (sameObject(source, sourcePath, destination, destinationPath)) {
    throw new FerryError('invalid', `${what}: an object cannot be moved onto itself`);
  }
  const native = sameAccount(source, destination) ? destination.features.move : undefined;

  let info: ObjectInfo;
  try {
    info = args.sourceInfo ?? (await source.stat(sourcePath, opts));
  } catch (err) {
    if (!isFerryError(err, 'not_found')) throw err;
    const done = await statIfPresent(destination, destinationPath, opts);
    if (done === undefined) throw err;
    // A repeat of a move that already finished (see the header).
    args.onProgress?.(done.size);
    return { method: native ? 'server-side' : 'copy-delete', bytes: done.size };
  }

  if (native) {
    let moved: ObjectInfo | undefined;
    try {
      moved = await native(sourcePath, destinationPath, opts);
    } catch (err) {
      const done = await finishedElsewhere(err, args, opts);
      if (done) return { method: 'server-side', bytes: done.size };
      // The provider cannot move this one (as rclone falls back on fs.ErrorCantMove): copy + delete.
      if (!isFerryError(err, 'unsupported')) throw err;
    }
    if (moved) {
      // A rename moves no bytes, so there is nothing to verify beyond what the provider answered.
      args.onProgress?.(moved.size);
      return {
        method: 'server-side',
        bytes: moved.size,
        ...(moved.etag === undefined ? {} : { etag: moved.etag }),
      };
    }
  }

  let copied: { bytes: number; checksums?: ComparedChecksums; verified?: HashKind[]; etag?: string };
  try {
    copied = await copyObject({
      source,
      sourcePath,
      destination,
      destinationPath,
      overwrite: 'always',
      sourceInfo: info,
      ...(signal === undefined ? {} : { signal }),
      ...(args.onProgress === undefined ? {} : { onProgress: args.onProgress }),
      ...(args.throttle === undefined ? {} : { throttle: args.throttle }),
    });
  } catch (err) {
    const done = await finishedElsewhere(err, args, opts);
    if (done) return { method: 'copy-delete', bytes: done.size };
    throw err;
  }
  try {
    await source.delete(sourcePath, opts);
  } catch (err) {
    // Already gone: a concurrent or earlier run of this move deleted it; the move is complete.
    if (!isFerryError(err, 'not_found')) throw sourceNotDeleted(err, what);
  }
  return {
    method: 'copy-delete',
    bytes: copied.bytes,
    ...(copied.checksums === undefined ? {} : { checksums: copied.checksums }),
    ...(copied.verified === undefined ? {} : { verified: copied.verified }),
    ...(copied.etag === undefined ? {} : { etag: copied.etag }),
  };
}

/**
 * After a not_found in the middle of a move: the destination object, when the source has gone and the
 * destination is there (another run of the same move finished first); else undefined.
 */
async function finishedElsewhere(
  err: unknown,
  args: MoveObjectArgs,
  opts: CallOptions,
): Promise<ObjectInfo | undefined> {
  if (!isFerryError(err, 'not_found')) return undefined;
  if ((await statIfPresent(args.source, args.sourcePath, opts)) !== undefined) return undefined;
  const done = await statIfPresent(args.destination, args.destinationPath, opts);
  if (done) args.onProgress?.(done.size);
  return done;
}

async function statIfPresent(store: Store, path: string, opts: CallOptions): Promise<ObjectInfo | undefined> {
  try {
    return await store.stat(path, opts);
  } catch (err) {
    if (isFerryError(err, 'not_found')) return undefined;
    throw err;
  }
}

/**
 * The copy is at the destination but the source is still there: never silent. The kind of the
 * delete's failure is kept, so a passing one (transient, throttled) is retried by the queue, which
 * copies again and deletes; a lasting one (forbidden) fails the move with this message.
 */
function sourceNotDeleted(err: unknown, what: string): FerryError {
  const detail = err instanceof Error ? err.message : String(err);
  const message = `${what}: the object was copied to the destination, but the source could not be deleted: ${detail}`;
  if (err instanceof FerryError) {
    return new FerryError(err.kind, message, {
      cause: err,
      ...(err.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: err.retryAfterSeconds }),
    });
  }
  return new FerryError('transient', message, { cause: err });
}
