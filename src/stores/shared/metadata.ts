// Metadata keys that more than one store reads. Each store checks the keys it reads when a location is
// created or given new metadata (its `checkMetadata`), so a typo answers 400 at once rather than at the
// first transfer (docs/api.md, "Metadata").
import { invalid } from '../../errors.js';

/** `endpoint` (s3 family, gcs, azureblob): another server, as an http or https URL. */
export function checkEndpoint(metadata: Record<string, unknown>): void {
  const { endpoint } = metadata;
  if (endpoint === undefined) return;
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
