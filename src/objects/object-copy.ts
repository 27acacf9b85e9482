// Copying one object from a store to a store: the operations-layer fallback of rclone's
// operations.Copy (STYLE.md). A server-side copy when the destination has one and both stores share
// provider and account; otherwise the source's read() streamed into the destination's write(), which
// holds at most concurrency x part size in memory. Either way the result is verified (issue 4: size
// always, a hash where both sides report the same kind); a bad copy is deleted and reported as
// FerryError('transient') so the queue tries again. No retries here: one attempt, classified.
import { FerryError, isFerryError } from '../errors.js';
import type { ObjectInfo, Store } from '../stores/contract.js';
import { ByteCounter, copyMismatch, sameAccount, sameObject } from './verify.js';

/** SPEC 4.14: `always` replaces an existing destination object, `if-missing` leaves it alone. */
export type Overwrite = 'always' | 'if-missing';

export interface CopyOutcome {
  action: 'copied' | 'skipped';
  /** How the bytes went; absent when skipped. */
  method?: 'server-side' | 'stream';
  /** Bytes copied: the object's size, or 0 when skipped. */
  bytes: number;
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
  signal?: AbortSignal;
  /** Cumulative bytes moved so far; called often (once per chunk read) on the stream path. */
  onProgress?: (bytesDone: number) => void;
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
      return { action: 'copied', method: 'server-side', bytes: written.size };
    }
  }

  const written = await streamCopy(args, info, what);
  return { action: 'copied', method: 'stream', bytes: written.size };
}

/** source.read() into destination.write(), counted and checked on the way. */
async function streamCopy(args: CopyObjectArgs, info: ObjectInfo, what: string): Promise<ObjectInfo> {
  const { source, sourcePath, destination, destinationPath, signal } = args;
  const body = await source.read(sourcePath, call(signal));
  const counter = new ByteCounter(info.size, what, args.onProgress);
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
  try {
    written = await destination.write(destinationPath, counter, {
      size: info.size,
      ...(info.mimeType === undefined ? {} : { mimeType: info.mimeType }),
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (err) {
    body.destroy();
    counter.destroy();
    if (signal?.aborted) throw signal.reason ?? err;
    throw sourceError ?? counter.failure ?? err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
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
