// azureblob as this store declares it (src/stores/declaration.ts): the storage account's name and key
// for a secret, and `endpoint` for another server (client.ts reads it; index.ts checks it).
import type { ProviderDeclaration } from '../declaration.js';
import { ENDPOINT_METADATA } from '../shared/fields.js';

export const declarations = {
  azureblob: {
    name: 'Azure Blob Storage',
    credentials: { kind: 'access-key' },
    secret: [
      // The account's name is no secret (it is in every blob's URL): shown as typed; only the key is hidden.
      {
        key: 'access_key_id',
        label: 'Storage account name',
        type: 'string',
        required: true,
        sensitive: false,
      },
      { key: 'secret_access_key', label: 'Account key', type: 'string', required: true, sensitive: true },
    ],
    metadata: [ENDPOINT_METADATA],
    // Content-MD5, in listings too.
    hashes: ['md5'],
    listingHashes: ['md5'],
    features: {
      bucketListing: true,
      bucketWord: 'container',
      copy: true,
      move: false,
      resumable: true,
      createBucket: true,
    },
  },
} as const satisfies Record<string, ProviderDeclaration>;
