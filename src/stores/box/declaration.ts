// box as this store declares it (src/stores/declaration.ts): OAuth tokens the refresher renews
// (oauth-single-use), and Box's SHA-1.
import type { ProviderDeclaration } from '../declaration.js';
import { OAUTH_SECRET } from '../shared/fields.js';

export const declarations = {
  box: {
    name: 'Box',
    credentials: { kind: 'oauth', rotation: 'oauth-single-use' },
    secret: OAUTH_SECRET,
    metadata: [],
    hashes: ['sha1'],
    // A listing gives no hash a sync could compare.
    listingHashes: [],
    features: {
      bucketListing: false,
      copy: true,
      move: true,
      resumable: false,
      createBucket: false,
    },
  },
} as const satisfies Record<string, ProviderDeclaration>;
