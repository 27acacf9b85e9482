// Retry policy (pg-boss): exponential backoff with jitter and a cap, the provider's Retry-After
// honoured, and a bounded number of attempts. Only passing failures are retried.
import { type FerryError, isFerryError } from '../errors.js';

export const MAX_ATTEMPTS = 5;

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

/** Transfers, objects and planning: 1 s doubling to a minute. */
export const TRANSFER_BACKOFF: BackoffPolicy = { baseMs: 1000, capMs: 60_000 };

export function retryable(err: unknown): err is FerryError {
  return isFerryError(err) && (err.kind === 'transient' || err.kind === 'throttled');
}

/**
 * Milliseconds to wait before attempt `attempts + 1`: half fixed, half random, never less than
 * Retry-After. A whole number: it is added to epoch milliseconds stored in BIGINT columns, which
 * PostgreSQL refuses a fraction for.
 */
export function backoffMs(
  attempts: number,
  err: { retryAfterSeconds?: number | undefined },
  random: () => number = Math.random,
  policy: BackoffPolicy = TRANSFER_BACKOFF,
): number {
  const exponential = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempts - 1));
  const jittered = exponential / 2 + random() * (exponential / 2);
  const asked = (err.retryAfterSeconds ?? 0) * 1000;
  return Math.ceil(Math.max(jittered, asked));
}

/** An error message for the record: the kind's words without a stack, never a secret (stores guarantee it). */
export function describe(err: unknown): string {
  if (isFerryError(err)) return err.message;
  return err instanceof Error ? `internal error: ${err.message}` : 'internal error';
}
