// Waiting on an event that only shows as state (a row, a count, a log line): the condition is read again
// until it holds. The timeout only stops a test that would otherwise hang; it is never what passes one,
// so it can be generous on a loaded machine.
import { setTimeout as tick } from 'node:timers/promises';

export interface WaitOptions {
  /** What is awaited, for the failure message. */
  what: string;
  /** Give up after this long (default 30 s). */
  timeoutMs?: number;
  /** Something to add to the failure message (the last state seen, a process's log). */
  detail?: () => string | Promise<string>;
  /** The pause between reads (default 10 ms); longer when each read costs another process work. */
  pauseMs?: number;
}

/** Resolves with the first truthy value of `read`; fails the test after `timeoutMs`. */
export async function waitUntil<T>(
  read: () => T | Promise<T>,
  { what, timeoutMs = 30_000, detail, pauseMs = 10 }: WaitOptions,
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
