// Copying one object from a store to a store: the operations-layer fallback of rclone's
// operations.Copy (STYLE.md). A server-side copy when the destination has one and both stores share
// provider and account; otherwise the source's read() streamed into the destination's write(), which
// holds at most concurrency x part size in memory. Either way the result is verified (docs/api.md,
// "Copy": the size always, the checksum where both sides report the same kind of hash); a bad copy is
// deleted and reported as FerryError('transient') so the queue tries again. No retries here: one
// attempt, classified. A streamed copy into a store with resumable writes records its upload part by
// part (UploadCheckpoint), and the next attempt continues it (docs/engine.md, "Resumption").

import { FerryError, isFerryError } from '../errors.js';
import type { Overwrite } from '../states.js';
import type {
  HashKind,
  ObjectInfo,
  ResumableUpload,
  ResumableWrites,
  Store,
  UploadedPart,
} from '../stores/contract.js';
import type { Throttle } from './throttle.js';
import {
  ByteCounter,
  type ComparedChecksums,
  comparedChecksums,
  copyMismatch,
  provenBy,
  sameAccount,
  sameObject,
} from './verify.js';

/**
 * A multipart upload recorded as it goes (src/engine/checkpoints.ts keeps it in the database), for the
 * copy's next attempt to continue.
 */
export interface RecordedUpload {
  destinationPath: string;
  /** The source version the parts hold. */
  sourceEtag: string;
  size: number;
  upload: ResumableUpload;
  /** The parts recorded so far, in index order (not necessarily a run without gaps). */
  parts: UploadedPart[];
}

/** Where a copy records its upload; every call fails with transient once the caller lost its lease. */
export interface UploadCheckpoint {
  load(): Promise<RecordedUpload | undefined>;
  /** Records a new upload in place of any earlier one. */
  start(upload: Omit<RecordedUpload, 'parts'>): Promise<void>;
  part(part: UploadedPart): Promise<void>;
  clear(): Promise<void>;
}

export interface CopyOutcome {
  action: 'copied' | 'skipped';
  /** How the bytes went; absent when skipped. */
  method?: 'server-side' | 'stream';
  /** Bytes copied: the object's size, or 0 when skipped. */
  bytes: number;
  /** The checksums the verification compared, when both sides reported one kind (docs/api.md, "Reports"). */
  checksums?: ComparedChecksums;
  /**
   * When copied: the hash kinds that proved the destination's bytes (provenBy); empty when only the
   * size could (docs/api.md, "Verification").
   */
  verified?: HashKind[];
  /** When copied: the destination's ETag as the write reported it, when it did (an undo compares it). */
  etag?: string;
}

function copied(method: 'server-side' | 'stream', info: ObjectInfo, written: ObjectInfo): CopyOutcome {
  const checksums = comparedChecksums(info, written);
  return {
    action: 'copied',
    method,
    bytes: written.size,
    ...(checksums === undefined ? {} : { checksums }),
    verified: provenBy(info, written),
    ...(written.etag === undefined ? {} : { etag: written.etag }),
  };
}

export interface CopyObjectArgs {
  source: Store;
  sourcePath: string;
  destination: Store;
  destinationPath: string;
  /** Default 'always'; 'if-missing' skips when the destination's stat() finds the object. */
  overwrite?: Overwrite;
  /** The source's metadata when the caller already has it (from a listing); else it is stat'ed. */
  sourceInfo?: ObjectInfo;
  /**
   * Told what the source is before any byte moves, so a caller can show the size from the start
   * (docs/api.md, "Polling": `bytes_total`); awaited.
   */
  onSource?: (info: ObjectInfo) => Promise<void>;
  signal?: AbortSignal;
  /** Cumulative bytes moved so far; called often (once per chunk read) on the stream path. */
  onProgress?: (bytesDone: number) => void;
  /**
   * Where a streamed copy records its multipart upload, when the destination can resume one: the
   * next attempt continues from the first missing part instead of byte 0.
   */
  checkpoint?: UploadCheckpoint;
  /**
   * The bandwidth cap(s) the streamed copy's reads wait for (docs/api.md, "Bandwidth"). A server-side
   * copy moves no bytes through ferry and is not throttled.
   */
  throttle?: Throttle;
}

export async function copyObject(args: CopyObjectArgs): Promise<CopyOutcome> {
  const { source, sourcePath, destination, destinationPath, signal } = args;
  signal?.throwIfAborted();
  const what = `copy ${sourcePath} to ${destinationPath}`;
  if (sameObject(source, sourcePath, destination, destinationPath)) {
    throw new FerryError('invalid', `${what}: an object cannot be copied onto itself`);
  }
  if (args.overwrite === 'if-missing' && (await exists(destination, destinationPath, signal))) {
    return { action: 'skipped', bytes: 0 };
  }
  const info = args.sourceInfo ?? (await source.stat(sourcePath, call(signal)));
  await args.onSource?.(info);

  const serverSide = sameAccount(source, destination) ? destination.features.copy : undefined;
  if (serverSide) {
    let written: ObjectInfo | undefined;
    try {
      written = await serverSide(sourcePath, destinationPath, { ...call(signal), source: info });
    } catch (err) {
      // A provider (or S3-compatible server) without a working copy call: stream instead, as
      // rclone does on fs.ErrorCantCopy. Anything else is the copy's own failure.
      if (!isFerryError(err, 'unsupported')) throw err;
    }
    if (written) {
      await verifyOrDiscard(destination, destinationPath, info, written, what);
      args.onProgress?.(written.size);
      return copied('server-side', info, written);
    }
  }

  return copied('stream', info, await streamCopy(args, info, what));
}

/**
 * What the streamed copy continues: the recorded upload, when it is for this destination and this
 * version of the source and the destination still knows it (`done`: its parts from part 0 up to the
 * first missing one; `kept`: those after that it still holds); otherwise a new upload, after the old
 * one is aborted.
 */
async function resumption(
  args: CopyObjectArgs,
  checkpoint: UploadCheckpoint,
  info: ObjectInfo & { etag: string },
): Promise<{ upload: ResumableUpload; done: UploadedPart[]; kept: UploadedPart[] }> {
  const { destination, destinationPath, signal } = args;
  const resumable = destination.features.resumable as ResumableWrites;
  const recorded = await checkpoint.load();
  if (recorded !== undefined) {
    const same =
      recorded.destinationPath === destinationPath &&
      recorded.sourceEtag === info.etag &&
      recorded.size === info.size;
    const held = same
      ? await resumable.check(destinationPath, recorded.upload, recorded.parts, call(signal))
      : undefined;
    if (held !== undefined) {
      const { partSize } = recorded.upload;
      // Only parts of the size their place in the object gives can be kept.
      const whole = held.filter((p) => p.size === Math.min(partSize, info.size - p.index * partSize));
      // The source is read again from the first missing part (one in flight when the worker died);
      // the parts after it that the destination holds are read but not sent again.
      const done: UploadedPart[] = [];
      for (const part of whole) {
        if (part.index !== done.length) break;
        done.push(part);
      }
      return { upload: recorded.upload, done, kept: whole.slice(done.length) };
    }
    // The source changed, or the destination forgot the upload: start over, leaving nothing behind.
    await resumable.abort(recorded.destinationPath, recorded.upload, call(signal)).catch(() => undefined);
  }
  const upload = await resumable.begin(destinationPath, {
    size: info.size,
    ...(info.mimeType === undefined ? {} : { mimeType: info.mimeType }),
    ...call(signal),
  });
  await checkpoint.start({ destinationPath, sourceEtag: info.etag, size: info.size, upload });
  return { upload, done: [], kept: [] };
}

/** source.read() into destination.write(), counted and checked on the way. */
async function streamCopy(args: CopyObjectArgs, info: ObjectInfo, what: string): Promise<ObjectInfo> {
  const { source, sourcePath, destination, destinationPath, signal, checkpoint } = args;
  // Resumable when the destination can continue an upload, the object is large enough to need one,
  // and the source has a version tag to pin every read to (a changed source must start over).
  const resumable =
    checkpoint !== undefined &&
    destination.features.resumable !== undefined &&
    info.etag !== undefined &&
    info.size > destination.features.upload.singleRequestMax
      ? await resumption(args, checkpoint, info as ObjectInfo & { etag: string })
      : undefined;
  const offset = resumable?.done.reduce((n, part) => n + part.size, 0) ?? 0;
  const pin = info.etag === undefined ? {} : { ifMatch: info.etag };
  const body = await source.read(sourcePath, {
    ...call(signal),
    ...(resumable ? pin : {}),
    ...(offset > 0 ? { range: { offset } } : {}),
  });
  // The source's own hashes are of the whole object: checked only when every byte is read here.
  const counter = new ByteCounter(
    info.size - offset,
    what,
    args.onProgress && ((bytes) => args.onProgress?.(offset + bytes)),
    args.throttle,
    signal,
    offset === 0 ? info.hashes : {},
  );
  // The source's own failure (a cut connection: transient) is the reason the write failed, whatever
  // the destination makes of its truncated input, so it is the one reported.
  let sourceError: unknown;
  body.on('error', (err) => {
    // Stores emit FerryErrors; anything else from a read stream is a connection that failed.
    sourceError ??=
      err instanceof FerryError || signal?.aborted
        ? err
        : new FerryError('transient', `${what}: reading the source failed: ${err.message}`, { cause: err });
    counter.destroy(err);
  });
  // The destination gave up on its input (its write failed): stop reading the source too.
  counter.on('close', () => {
    if (!body.destroyed) body.destroy();
  });
  // Stores honour the signal in their own calls, but a write waiting for input would wait forever on
  // a source that stalls: the abort ends the stream between them too.
  const onAbort = () => counter.destroy(signal?.reason ?? new Error('aborted'));
  signal?.addEventListener('abort', onAbort, { once: true });
  body.pipe(counter);
  let written: ObjectInfo;
  const options = {
    size: info.size,
    ...(info.mimeType === undefined ? {} : { mimeType: info.mimeType }),
    ...(signal === undefined ? {} : { signal }),
    // What the counter proves of the bytes by their end: the destination need not hash them again.
    ...(Object.keys(counter.checks).length === 0 ? {} : { bodyHashes: counter.checks }),
  };
  try {
    written =
      resumable && checkpoint && destination.features.resumable
        ? await destination.features.resumable.write(destinationPath, counter, {
            ...options,
            ...resumable,
            onPart: (part) => checkpoint.part(part),
            prefix: () =>
              source.read(sourcePath, { ...call(signal), ...pin, range: { offset: 0, length: offset } }),
          })
        : await destination.write(destinationPath, counter, options);
  } catch (err) {
    body.destroy();
    counter.destroy();
    if (signal?.aborted) throw signal.reason ?? err;
    throw sourceError ?? counter.failure ?? err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  // The upload is complete: nothing is left to resume.
  if (resumable) await checkpoint?.clear();
  const failure = sourceError ?? counter.failure;
  if (failure !== undefined) {
    // The destination accepted an object although the source failed: it cannot be trusted.
    await destination.delete(destinationPath).catch(() => undefined);
    throw failure;
  }
  await verifyOrDiscard(destination, destinationPath, info, written, what);
  return written;
}

/** Deletes a destination object that does not match its source, and reports a transient failure. */
async function verifyOrDiscard(
  destination: Store,
  destinationPath: string,
  source: ObjectInfo,
  written: ObjectInfo,
  what: string,
): Promise<void> {
  const mismatch = copyMismatch(source, written);
  if (mismatch === undefined) return;
  const removed = await destination.delete(destinationPath).then(
    () => true,
    (err: unknown) => isFerryError(err, 'not_found'),
  );
  throw new FerryError(
    'transient',
    `${what}: verification failed: ${mismatch}; ${
      removed ? 'the destination object was removed' : 'the destination object could not be removed'
    }`,
  );
}

async function exists(store: Store, path: string, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    await store.stat(path, call(signal));
    return true;
  } catch (err) {
    if (isFerryError(err, 'not_found')) return false;
    throw err;
  }
}

function call(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal === undefined ? {} : { signal };
}
