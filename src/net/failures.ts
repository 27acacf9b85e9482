// Network failure classification shared by every store and by URL pulls: reading Retry-After, and
// turning a failed connection into FerryError('transient'). Reading a provider's error BODY is not
// done here: each provider's errors.ts owns that, in one function per provider.
import { FerryError } from '../errors.js';

/**
 * Retry-After (RFC 9110 10.2.3) in whole seconds: delta-seconds, or an HTTP date counted from `now`.
 * Undefined when the header is absent or unreadable; never negative.
 */
export function parseRetryAfter(
  value: string | string[] | undefined,
  now: number = Date.now(),
): number | undefined {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!raw) return undefined;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.ceil(Number(raw));
  const date = Date.parse(raw);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** True for the error a fetch or request throws when its AbortSignal fires. */
export function isAbort(err: unknown): boolean {
  return (
    err instanceof Error && (err.name === 'AbortError' || (err as { code?: unknown }).code === 'ABORT_ERR')
  );
}

/**
 * A request that never got an HTTP answer (refused, reset, DNS, timeout) as FerryError('transient').
 * Aborts are returned unchanged: the caller cancelled, nothing failed. FerryErrors pass through.
 */
export function networkFailure(err: unknown, provider: string, operation: string): unknown {
  if (err instanceof FerryError || isAbort(err)) return err;
  return new FerryError('transient', `${provider}: ${operation}: ${connectionFailure(err)}`, { cause: err });
}

/** undici's own time bounds, in words (src/net/time-bounds.ts sets them). */
const TIMEOUTS: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'no connection in time',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
  UND_ERR_BODY_TIMEOUT: 'the answer stalled',
};

/** What went wrong with a connection, for a message: "the answer stalled (UND_ERR_BODY_TIMEOUT)". */
export function connectionFailure(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const detail = typeof code === 'string' ? code : err instanceof Error ? err.message : String(err);
  const words = typeof code === 'string' ? TIMEOUTS[code] : undefined;
  return `${words ?? 'connection failed'} (${detail})`;
}
