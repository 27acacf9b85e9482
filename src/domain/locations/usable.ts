// Whether a location may take work now (docs/api.md, "Copy"): it is active, and a single-use token
// lasts long enough. Every request that queues or writes through a location asks here first.
import type { LocationRow } from '../../db/schema.js';
import { conflict } from '../../errors.js';
import { rotationClass } from '../../providers.js';

/**
 * A single-use token (onedrive, box) that expires within this window cannot be trusted to last a
 * copy: the copy is refused with 409 until the location is refreshed (docs/api.md, "Copy").
 */
export const SINGLE_USE_MARGIN_MS = 5 * 60_000;

/** 409 unless the location is active and its token lasts (docs/api.md, "Copy"); `what` the refused work. */
export function checkUsable(row: LocationRow, now: number, what = 'copies'): void {
  if (row.status !== 'active') {
    throw conflict(
      `location ${row.label} (${row.id}) is ${row.status}; only active locations accept ${what}`,
    );
  }
  const provider = row.provider;
  if (
    rotationClass(provider) === 'oauth-single-use' &&
    row.access_token_expires_at !== null &&
    row.access_token_expires_at <= now + SINGLE_USE_MARGIN_MS
  ) {
    throw conflict(
      `the access token of location ${row.label} (${row.id}) is expired or expires within 5 minutes; refresh it (POST /v1/locations/refresh) and retry`,
    );
  }
}
