// box as this store declares it (src/stores/declaration.ts): OAuth tokens the refresher renews
// (oauth-single-use), and Box's SHA-1.
import type { ProviderDeclaration } from '../declaration.js';
import { FOLDER_FEATURES, OAUTH_SECRET } from '../shared/fields.js';

export const declarations = {
  box: {
    name: 'Box',
    credentials: { kind: 'oauth', rotation: 'oauth-single-use' },
    secret: OAUTH_SECRET,
    metadata: [],
    hashes: ['sha1'],
    // A listing gives no hash a sync could compare.
    listingHashes: [],
    features: FOLDER_FEATURES,
  },
} as const satisfies Record<string, ProviderDeclaration>;
