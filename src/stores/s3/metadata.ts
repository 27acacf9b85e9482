// The metadata keys the S3 family reads (docs/api.md, "Metadata"), checked for type when a location is
// created or given new metadata. endpoint.ts reads them again when a store opens, with the rules that
// need the provider (which keys are required, what a region may look like).
import { invalid } from '../../errors.js';
import { checkEndpoint } from '../shared/metadata.js';

export function checkMetadata(metadata: Record<string, unknown>): void {
  checkEndpoint(metadata);
  const { region, force_path_style: forcePathStyle } = metadata;
  if (region !== undefined && (typeof region !== 'string' || region === '')) {
    throw invalid('metadata.region must be a non-empty string');
  }
  if (forcePathStyle !== undefined && typeof forcePathStyle !== 'boolean') {
    throw invalid('metadata.force_path_style must be a boolean');
  }
}
