import { invalid } from './errors.js';

// Time is injected so that expiry, backoff and lease tests do not sleep.
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Starts a timer: `ranOut` is called after `ms`, unless the cancel it answers is called first. Injected
 * where a test must end a wait by hand rather than sleep through it (the queue loop, src/queue/loop.ts).
 */
export interface Timer {
  start(ms: number, ranOut: () => void): () => void;
}

export const systemTimer: Timer = {
  start(ms, ranOut) {
    const timer = setTimeout(ranOut, ms);
    return () => clearTimeout(timer);
  },
};

export function toRfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

export function parseRfc3339(value: string, field: string): number {
  // The HTTP schema checks the format too; this guards every other caller (the CLI, secret expiry).
  const ms = Date.parse(value);
  if (
    !/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value) ||
    Number.isNaN(ms)
  ) {
    throw invalid(`${field} must be an RFC 3339 date-time such as 2030-01-31T12:00:00Z`);
  }
  return ms;
}
