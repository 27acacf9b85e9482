// gcs as this store declares it (src/stores/declaration.ts): a service-account key file for a secret,
// and `endpoint` for another server (client.ts reads it; index.ts checks it when a location is created).
import type { ProviderDeclaration } from '../declaration.js';
import { ENDPOINT_METADATA } from '../shared/fields.js';

export const declarations = {
  gcs: {
    name: 'Google Cloud Storage',
    credentials: { kind: 'service-account' },
    secret: [
      {
        key: 'service_account_json',
        label: 'Service-account key (JSON)',
        help: 'The key file Google gives: type "service_account", client_email, private_key',
        type: 'service-account-key',
        required: true,
        sensitive: true,
      },
    ],
    metadata: [ENDPOINT_METADATA],
    // Objects carry md5Hash (not for composite objects) and crc32c, in listings too.
    hashes: ['md5', 'crc32c'],
    listingHashes: ['md5', 'crc32c'],
    features: {
      bucketListing: true,
      bucketWord: 'bucket',
      copy: true,
      move: false,
      resumable: false,
      createBucket: true,
    },
  },
} as const satisfies Record<string, ProviderDeclaration>;
