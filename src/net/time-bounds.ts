// Time bounds of the outbound calls whose answers ferry reads (docs/api.md, "Outbound calls", "Time
// bounds"): the wait for an answer's headers; for a body streamed onwards (a pulled file, a download),
// the longest pause between two bytes, never a total, since a large file legitimately takes long; and
// for an answer read whole (JSON, a token endpoint, an error body), the whole call. A call cut off by
// one of them is a passing failure (FerryError('transient')), tried again like a refused connection.
import { FerryError } from '../errors.js';

export interface OutboundTimeouts {
  /** Waiting for the headers of an answer (undici's headersTimeout). */
  headersMs: number;
  /** The longest pause in a streamed body (undici's bodyTimeout). */
  idleMs: number;
  /** A call whose answer is read whole, from the request to the last byte. */
  answerMs: number;
}

/** FERRY_OUTBOUND_HEADERS_SECONDS, _IDLE_SECONDS and _ANSWER_SECONDS at their defaults. */
export const OUTBOUND_DEFAULTS: OutboundTimeouts = { headersMs: 60_000, idleMs: 120_000, answerMs: 30_000 };

export function outboundTimeouts(settings: {
  headersSeconds: number;
  idleSeconds: number;
  answerSeconds: number;
}): OutboundTimeouts {
  return {
    headersMs: settings.headersSeconds * 1000,
    idleMs: settings.idleSeconds * 1000,
    answerMs: settings.answerSeconds * 1000,
  };
}

export interface Deadline {
  /** Aborts with FerryError('transient') when the time is up. */
  readonly signal: AbortSignal;
  /** Ends the timer (the call is over). */
  clear(): void;
}

/**
 * A deadline of `ms` for the call described by `what` ("dropbox: files/list_folder a/b"). Its signal,
 * given to undici's request(), rejects the request or, once the answer has come, destroys its body
 * with the FerryError, so a reader of the body sees the same error. `signal` (the caller's) aborts it
 * too, with the caller's reason, which stays an abort.
 */
export function deadline(ms: number, what: string, signal?: AbortSignal | null): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(
      new FerryError('transient', `${what}: no complete answer within ${seconds(ms)}`, {
        cause: new Error('timeout'),
      }),
    );
  }, ms);
  timer.unref();
  const onAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** "30 s", "1.5 s": a duration as messages show it. */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
