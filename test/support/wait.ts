// Waiting on an event that only shows as state (a row, a count, a log line): the condition is read again
// until it holds. The timeout only stops a test that would otherwise hang; it is never what passes one,
// so it can be generous on a loaded machine.
import { setTimeout as tick } from 'node:timers/promises';

/**
 * How long any wait of the tests goes before it calls what it waits for a hang (a server that never
 * starts, a page that never shows a line, a job that never ends): two minutes, so that a 2-core machine
 * running many times its cores in work (other suites, builds, CPU hogs) is slow, not failed. It is only a
 * hang detector: nothing passes by it, and a file that hangs is stopped by the runner's limit as well
 * (docs/testing.md). Waits take this unless the length of a wait is what a test is about.
 */
export const HANG_MS = 120_000;

export interface WaitOptions {
  /** What is awaited, for the failure message. */
  what: string;
  /** Give up after this long (default HANG_MS). */
  timeoutMs?: number;
  /** Something to add to the failure message (the last state seen, a process's log). */
  detail?: () => string | Promise<string>;
  /** The pause between reads (default 10 ms); longer when each read costs another process work. */
  pauseMs?: number;
}

/** Resolves with the first truthy value of `read`; fails the test after `timeoutMs`. */
export async function waitUntil<T>(
  read: () => T | Promise<T>,
  { what, timeoutMs = HANG_MS, detail, pauseMs = 10 }: WaitOptions,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) {
      const more = detail ? `\n${await detail()}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${more}`);
    }
    // Only a pause between reads, so as not to spin: nothing depends on its length.
    await tick(pauseMs);
  }
}
