// Location metadata (docs/api.md, "Metadata"): a non-secret JSON object of at most 16 KiB, nested at
// most 32 levels. The depth is checked first and without recursion (JSON.stringify itself overflows the
// stack on a few thousand levels), then the size; the keys a store reads are checked by that store (through the registry),
// so a typo fails at create time rather than at the first transfer.
import { METADATA_MAX_BYTES, METADATA_MAX_DEPTH } from '../../api/input.js';
import type { LocationRow } from '../../db/schema.js';
import { locationMetadata } from '../../durable/records.js';
import { invalid } from '../../errors.js';
import type { Provider } from '../../providers.js';
import { checkStoreMetadata } from '../../stores/index.js';

export type Metadata = Record<string, unknown>;

/** Whether `value` holds objects or arrays nested more than `max` levels (the value itself is level 1). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

export function checkMetadata(provider: Provider, metadata: Metadata): Metadata {
  if (nestedDeeperThan(metadata, METADATA_MAX_DEPTH)) {
    throw invalid(`metadata must be nested at most ${METADATA_MAX_DEPTH} levels deep`);
  }
  const text = JSON.stringify(metadata);
  if (Buffer.byteLength(text, 'utf8') > METADATA_MAX_BYTES) {
    throw invalid(`metadata must be at most ${METADATA_MAX_BYTES} bytes of JSON`);
  }
  checkStoreMetadata(provider, metadata);
  return metadata;
}

export function serializeMetadata(metadata: Metadata | undefined): string | null {
  if (metadata === undefined || Object.keys(metadata).length === 0) return null;
  return locationMetadata.encode(metadata);
}

/** A location's metadata (null: none). */
export function parseMetadata(row: Pick<LocationRow, 'id' | 'metadata'>): Metadata {
  return row.metadata === null ? {} : locationMetadata.decode(row.metadata, row.id);
}
