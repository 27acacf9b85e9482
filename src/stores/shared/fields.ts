// Secret and metadata fields, and features, that several providers declare alike (src/stores/
// declaration.ts): the access key pair of the S3 family, the OAuth tokens and the folder features of
// the four OAuth providers, and the `endpoint` of the bucket stores. Plain data, like the declarations
// that use them.
import type { FeatureDeclaration, FieldDeclaration } from '../declaration.js';

/** An access key pair (docs/api.md, "Secrets by provider"). */
export const ACCESS_KEY_SECRET: readonly FieldDeclaration[] = [
  { key: 'access_key_id', label: 'Access key ID', type: 'string', required: true, sensitive: true },
  { key: 'secret_access_key', label: 'Secret access key', type: 'string', required: true, sensitive: true },
];

/** OAuth tokens, which the refresher renews (docs/api.md, "Location health"). */
export const OAUTH_SECRET: readonly FieldDeclaration[] = [
  { key: 'access_token', label: 'Access token', type: 'string', required: true, sensitive: true },
  { key: 'refresh_token', label: 'Refresh token', type: 'string', required: true, sensitive: true },
  {
    key: 'expiry',
    label: 'Access token expires',
    help: 'An RFC 3339 time, e.g. 2030-01-31T12:00:00Z',
    type: 'time',
    required: true,
    sensitive: false,
  },
];

/** Metadata `endpoint`: another server than the provider's own (checkEndpoint in metadata.ts checks it). */
export const ENDPOINT_METADATA: FieldDeclaration = {
  key: 'endpoint',
  label: 'Endpoint (optional)',
  help: 'Another server (self-hosted, an emulator): an http(s) URL',
  type: 'url',
  required: false,
  sensitive: false,
};

/**
 * A store of folders rather than buckets (Drive, Dropbox, OneDrive, Box): copies and moves on the
 * server, no resumable upload across processes, no bucket to create.
 */
export const FOLDER_FEATURES: FeatureDeclaration = {
  bucketListing: false,
  copy: true,
  move: true,
  resumable: false,
  createBucket: false,
};
