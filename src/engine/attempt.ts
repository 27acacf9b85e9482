// One attempt at a piece of work (an object or a single transfer): the work runs with its progress
// written as it goes, and its end is decided by src/lifecycle/outcome.ts, whose settlement the lifecycle
// modules write.
import type { Clock } from '../clock.js';
import { afterFailure, type Crashes, type Settlement } from '../lifecycle/outcome.js';
import { ProgressWriter } from './progress.js';

export interface AttemptArgs<T> {
  clock: Clock;
  signal: AbortSignal;
  /** This attempt's number, counted from 1 (the claim counted it). */
  attempts: number;
  /** The work's crashes, this attempt counted as one until it settles. */
  crashes: Crashes;
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
    return afterFailure(err, args.attempts, args.clock, args.crashes);
  }
}
