// Location metadata (docs/api.md, "Metadata"): a non-secret JSON object of at most 16 KiB.
// The size is checked here; the keys a store reads are checked by that store (through the registry),
// so a typo fails at create time rather than at the first transfer.
import { invalid } from '../../errors.js';
import type { Provider } from '../../providers.js';
import { checkStoreMetadata } from '../../stores/index.js';

export const METADATA_MAX_BYTES = 16 * 1024;

export type Metadata = Record<string, unknown>;

export function checkMetadata(provider: Provider, metadata: Metadata): Metadata {
  const text = JSON.stringify(metadata);
  if (Buffer.byteLength(text, 'utf8') > METADATA_MAX_BYTES) {
    throw invalid(`metadata must be at most ${METADATA_MAX_BYTES} bytes of JSON`);
  }
  checkStoreMetadata(provider, metadata);
  return metadata;
}

export function serializeMetadata(metadata: Metadata | undefined): string | null {
  if (metadata === undefined || Object.keys(metadata).length === 0) return null;
  return JSON.stringify(metadata);
}

export function parseMetadata(text: string | null): Metadata {
  return text === null ? {} : (JSON.parse(text) as Metadata);
}
