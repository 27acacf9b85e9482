// When a failed webhook attempt is tried again (docs/webhooks.md, "Retries and disabling"): after
// 5 seconds, 5 minutes, 30 minutes, 2, 5 and 10 hours, then every 10 hours, each ±10% at random so
// that endpoints that failed together are not all tried again at the same moment; never later than a
// day after the event, which is the last try. An endpoint whose attempts all failed for a day is
// disabled.

export const DAY_MS = 24 * 3_600_000;
const SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000];
const JITTER = 0.1;

/**
 * The time of the next attempt of a message created at `createdAt` whose attempt number `attempt`
 * failed at `now`, or undefined when that was the last one.
 */
export function nextAttemptAt(
  attempt: number,
  createdAt: number,
  now: number,
  random: () => number = Math.random,
): number | undefined {
  const last = createdAt + DAY_MS;
  if (now >= last) return undefined;
  const base = SCHEDULE_MS[Math.min(attempt, SCHEDULE_MS.length) - 1] ?? (SCHEDULE_MS[0] as number);
  const delay = Math.round(base * (1 - JITTER + 2 * JITTER * random()));
  return Math.min(now + delay, last);
}
