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

/**
 * An error message for the record: the kind's words without a stack, never a secret (stores guarantee
 * it). A NUL (a path may hold one) is written as U+FFFD: PostgreSQL cannot store it, and a settlement
 * the database refuses would be a crash of the work.
 */
export function describe(err: unknown): string {
  const message = isFerryError(err)
    ? err.message
    : err instanceof Error
      ? `internal error: ${err.message}`
      : 'internal error';
  return message.replaceAll('\u0000', '\ufffd');
}

/** The longest crash message kept in a row's error (the whole of it goes to the log). */
const CRASH_MESSAGE_CHARS = 200;

/**
 * A crash's message for the record: its first line, without control characters (PostgreSQL cannot
 * store a NUL, and a crash may have come from one), at most 200 characters. An unexpected exception
 * has no guarantee about its words, so only this much of them is kept; never its stack.
 */
export function crashMessage(err: unknown): string {
  const text = describe(err).split('\n', 1)[0] ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim();
  const short = clean.length > CRASH_MESSAGE_CHARS ? `${clean.slice(0, CRASH_MESSAGE_CHARS)}…` : clean;
  return short === '' ? 'internal error' : short;
}

/** What a row's error says when the work is failed for crashing (docs/api.md, "Background work that keeps failing"). */
export function crashReason(crashes: number, message: string): string {
  const [before, after] = crashReasonAround(message);
  return `${before}${crashes} ${crashes === 1 ? 'time' : 'times'}${after}`;
}

/**
 * crashReason's words before the count and after "time(s)", for a statement that writes each row's
 * own count.
 */
export function crashReasonAround(message: string): [string, string] {
  return ['the worker crashed ', ` on this work: ${message}`];
}

/** The message of a crash that nobody saw: the process died or froze while it held the lease. */
export const LEASE_RAN_OUT = 'its process stopped while running it (the lease ran out)';

/** When work that keeps crashing is failed. */
export interface CrashPolicy {
  /** FERRY_WORK_MAX_CRASHES. */
  max: number;
}

export const DEFAULT_CRASH_POLICY: CrashPolicy = { max: 3 };
