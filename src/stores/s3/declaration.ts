// The S3 family's providers as this store declares them (src/stores/declaration.ts): one store, four
// providers, the same access key pair, and metadata that says where the bucket lives (endpoint.ts reads
// it; metadata.ts checks it when a location is created).
import type { FeatureDeclaration, FieldDeclaration, ProviderDeclaration } from '../declaration.js';
import { ACCESS_KEY_SECRET, ENDPOINT_METADATA } from '../shared/fields.js';

const REGION: FieldDeclaration = {
  key: 'region',
  label: 'Region (optional)',
  type: 'string',
  required: false,
  sensitive: false,
};

const METADATA: readonly FieldDeclaration[] = [
  ENDPOINT_METADATA,
  REGION,
  {
    key: 'force_path_style',
    label: 'Path-style addressing',
    help: 'Default: yes, except on s3 without an endpoint',
    type: 'boolean',
    required: false,
    sensitive: false,
  },
];

const FEATURES: FeatureDeclaration = {
  bucketListing: true,
  bucketWord: 'bucket',
  copy: true,
  move: false,
  resumable: true,
  createBucket: true,
};

const family = (name: string, metadata: readonly FieldDeclaration[], listingHashes: ['md5'] | []) => ({
  name,
  credentials: { kind: 'access-key' } as const,
  secret: ACCESS_KEY_SECRET,
  metadata,
  // An object's ETag is its MD5 when it was written in one request (upload.ts, md5FromEtag).
  hashes: ['md5'] as const,
  listingHashes,
  features: FEATURES,
});

export const declarations = {
  s3: family('Amazon S3 (or S3-compatible)', METADATA, ['md5']),
  r2: family(
    'Cloudflare R2',
    [
      {
        key: 'account_id',
        label: 'Cloudflare account ID',
        type: 'string',
        required: false,
        sensitive: false,
      },
      ...METADATA,
    ],
    ['md5'],
  ),
  wasabi: family('Wasabi', METADATA, ['md5']),
  // B2's ETag is not known to be an MD5 (docs/api.md, "Sync"): its listing proves nothing.
  b2: family(
    'Backblaze B2',
    METADATA.map((f) =>
      f === REGION ? { ...f, label: 'Region', help: 'Needed unless an endpoint is given' } : f,
    ),
    [],
  ),
} satisfies Record<string, ProviderDeclaration>;
