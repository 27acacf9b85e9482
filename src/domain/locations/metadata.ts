// Location metadata (SPEC 2.1, DECISIONS "Locations"): a non-secret JSON object of at most 16 KiB.
// The keys ferry itself reads are checked for type here, so a typo fails at create time rather than
// at the first transfer.
import { invalid } from '../../errors.js';

export const METADATA_MAX_BYTES = 16 * 1024;

export type Metadata = Record<string, unknown>;

export function checkMetadata(metadata: Metadata): Metadata {
  const text = JSON.stringify(metadata);
  if (Buffer.byteLength(text, 'utf8') > METADATA_MAX_BYTES) {
    throw invalid(`metadata must be at most ${METADATA_MAX_BYTES} bytes of JSON`);
  }
  const { endpoint, region, force_path_style: forcePathStyle } = metadata;
  if (endpoint !== undefined) {
    let url: URL | undefined;
    try {
      url = typeof endpoint === 'string' ? new URL(endpoint) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw invalid('metadata.endpoint must be an http or https URL');
    }
  }
  if (region !== undefined && (typeof region !== 'string' || region === '')) {
    throw invalid('metadata.region must be a non-empty string');
  }
  if (forcePathStyle !== undefined && typeof forcePathStyle !== 'boolean') {
    throw invalid('metadata.force_path_style must be a boolean');
  }
  return metadata;
}

export function serializeMetadata(metadata: Metadata | undefined): string | null {
  if (metadata === undefined || Object.keys(metadata).length === 0) return null;
  return JSON.stringify(metadata);
}

export function parseMetadata(text: string | null): Metadata {
  return text === null ? {} : (JSON.parse(text) as Metadata);
}
