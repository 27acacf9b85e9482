// Small figures every bench prints: the median of its runs and the machine's load average.
import { loadavg } from 'node:os';

/** The middle of `xs` (the upper one of two for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
}

/** The load average over 1, 5 and 15 minutes, as `uptime` prints it. */
export function loadAverage(): string {
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
}
