// dropbox as this store declares it (src/stores/declaration.ts): OAuth tokens the refresher renews
// (oauth-stable), and Dropbox's content hash.
import type { ProviderDeclaration } from '../declaration.js';
import { FOLDER_FEATURES, OAUTH_SECRET } from '../shared/fields.js';

export const declarations = {
  dropbox: {
    name: 'Dropbox',
    credentials: { kind: 'oauth', rotation: 'oauth-stable' },
    secret: OAUTH_SECRET,
    metadata: [],
    hashes: ['dropbox'],
    // A listing gives no hash a sync could compare.
    listingHashes: [],
    features: FOLDER_FEATURES,
  },
} as const satisfies Record<string, ProviderDeclaration>;
