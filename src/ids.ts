// Identifiers are random UUIDs (v4), stored as text on both databases.
import { randomBytes, randomUUID } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const newId = (): string => randomUUID();

/** The last time-ordered id's milliseconds and its counter within them (this process). */
let orderedMs = -1;
let orderedCount = 0;

/**
 * A UUID (version 7 layout: 48 bits of milliseconds, then a 12-bit counter, then random bits) that
 * sorts after every one this process made before it, even within one millisecond or when `now` goes
 * back: for rows listed newest first by (time, id), such as the audit log's, where a random id would
 * put two events of one millisecond in either order.
 */
export function newOrderedId(now: number): string {
  if (now > orderedMs) {
    orderedMs = now;
    orderedCount = 0;
  } else if (++orderedCount > 0xfff) {
    orderedMs += 1;
    orderedCount = 0;
  }
  const hex =
    orderedMs.toString(16).padStart(12, '0').slice(-12) +
    (0x7000 | orderedCount).toString(16) +
    (((randomBytes(1)[0] as number) & 0x3f) | 0x80).toString(16).padStart(2, '0') +
    randomBytes(7).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
