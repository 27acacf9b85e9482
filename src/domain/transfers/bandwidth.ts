// `bandwidth_limit` (docs/api.md, "Bandwidth"): the one check of a job's cap, for every body that
// carries it (copy, and sync and schedules). A route declares the field with BandwidthLimit
// (src/api/transfers.ts), which answers 400 before this runs; this holds the same rule for callers
// that do not come through a route (a schedule's stored action, run later).

import { BANDWIDTH_MAX, BANDWIDTH_MIN } from '../../api/transfers.js';
import { invalid } from '../../errors.js';

export { BANDWIDTH_MAX, BANDWIDTH_MIN };

/** The cap in bytes per second, or undefined when none was given; 400 naming `field` otherwise. */
export function parseBandwidthLimit(value: unknown, field = 'bandwidth_limit'): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw invalid(`${field} must be a whole number of bytes per second`);
  }
  if (value < BANDWIDTH_MIN || value > BANDWIDTH_MAX) {
    throw invalid(
      `${field} must be from ${BANDWIDTH_MIN} (64 KiB/s) to ${BANDWIDTH_MAX} (10 GiB/s) bytes per second, got ${value}`,
    );
  }
  return value;
}
