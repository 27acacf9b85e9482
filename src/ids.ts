// Identifiers are random UUIDs (v4), stored as text on both databases.
import { randomUUID } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const newId = (): string => randomUUID();

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
