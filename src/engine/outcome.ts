// How an attempt at a piece of work (an object, a transfer, a job's planning) ends, decided in one
// place for all of them: done; again later, after a backoff, when the failure is passing and attempts
// are left; or failed for good. The lifecycle modules write what is decided here.
import type { Clock } from '../domain/clock.js';
import { backoffMs, describe, MAX_ATTEMPTS, retryable } from './backoff.js';
import { ProgressWriter } from './progress.js';

export type Settlement =
  | { kind: 'done'; bytes: number; bytesTotal?: number; skipped?: boolean }
  | { kind: 'again'; error: string; runAfter: number }
  | { kind: 'failed'; error: string };

/** What follows a failed attempt number `attempts` (counted from 1). */
export function afterFailure(err: unknown, attempts: number, clock: Clock): Settlement {
  const error = describe(err);
  if (retryable(err) && attempts < MAX_ATTEMPTS) {
    return { kind: 'again', error, runAfter: clock.now() + backoffMs(attempts, err) };
  }
  return { kind: 'failed', error };
}

export interface AttemptArgs<T> {
  clock: Clock;
  signal: AbortSignal;
  /** This attempt's number, counted from 1 (the claim counted it). */
  attempts: number;
  /** The work; it reports cumulative bytes as it goes. */
  work: (report: (bytes: number) => void) => Promise<T>;
  /** What the work's result settles as. */
  done: (result: T) => Settlement;
  /** Writes progress (at most once a second, by ProgressWriter). */
  progress: (bytes: number) => Promise<void>;
}

/**
 * Runs one attempt with its progress written as it goes, and says how it settles; undefined when it
 * was aborted (handed back on shutdown, or its job canceled: the caller decides what the row becomes).
 */
export async function attempt<T>(args: AttemptArgs<T>): Promise<Settlement | undefined> {
  const progress = new ProgressWriter(args.clock, args.progress);
  try {
    const result = await args.work((bytes) => progress.report(bytes));
    await progress.flush();
    return args.done(result);
  } catch (err) {
    progress.stop();
    if (args.signal.aborted) return undefined;
    return afterFailure(err, args.attempts, args.clock);
  }
}
