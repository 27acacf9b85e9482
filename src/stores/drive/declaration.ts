// drive as this store declares it (src/stores/declaration.ts): OAuth tokens the refresher renews
// (oauth-stable), and the MD5, SHA-1 and SHA-256 Drive reports for binary files.
import type { ProviderDeclaration } from '../declaration.js';
import { FOLDER_FEATURES, OAUTH_SECRET } from '../shared/fields.js';

export const declarations = {
  drive: {
    name: 'Google Drive',
    credentials: { kind: 'oauth', rotation: 'oauth-stable' },
    secret: OAUTH_SECRET,
    metadata: [],
    hashes: ['md5', 'sha1', 'sha256'],
    // A listing gives no hash a sync could compare.
    listingHashes: [],
    features: FOLDER_FEATURES,
  },
} as const satisfies Record<string, ProviderDeclaration>;
