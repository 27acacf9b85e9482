// Bandwidth caps on the bytes that go through ferry (docs/api.md, "Bandwidth"): a Throttle is asked
// for every chunk before it passes on, and resolves when the chunk may go (src/engine/bandwidth.ts
// keeps the token buckets). It is awaited inside a stream's transform, so a throttled stream simply
// stops asking its source for more: backpressure does the rest, and no more than the streams' own
// buffers is held meanwhile. A wait is a timer (never a loop), and ends at once on abort.
import { type Readable, Transform, type TransformCallback } from 'node:stream';

/** Resolves when `bytes` more may pass; rejects with the signal's reason when it is aborted first. */
export type Throttle = (bytes: number, signal?: AbortSignal) => Promise<void>;

/** Both throttles, one after the other (a job's cap, then its workspace's); undefined when neither. */
export function bothThrottles(a: Throttle | undefined, b: Throttle | undefined): Throttle | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return async (bytes, signal) => {
    await a(bytes, signal);
    await b(bytes, signal);
  };
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it is aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    // A wait keeps nothing alive by itself: the server, or a stream waiting on it, does.
    timer.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `promise`, or the signal's reason as soon as it is aborted (the promise itself goes on: it may be
 * shared by other waiters).
 */
export function untilSettled<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}

/** A pass-through that waits for the throttle before each chunk goes on. */
export class ThrottleStream extends Transform {
  constructor(
    private readonly throttle: Throttle,
    private readonly signal?: AbortSignal,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.throttle(chunk.length, this.signal).then(
      () => callback(null, chunk),
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
    );
  }
}

/**
 * `body` through a throttle (a pull's download, a file through ferry), or `body` itself without one.
 * An error of either side ends the other.
 */
export function throttled(body: Readable, throttle: Throttle | undefined, signal?: AbortSignal): Readable {
  if (throttle === undefined) return body;
  const out = new ThrottleStream(throttle, signal);
  body.once('error', (err) => out.destroy(err));
  out.once('close', () => {
    if (!body.destroyed) body.destroy();
  });
  return body.pipe(out);
}
