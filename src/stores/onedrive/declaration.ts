// onedrive as this store declares it (src/stores/declaration.ts): OAuth tokens the refresher renews
// (oauth-single-use), QuickXorHash (and SHA-1 where Graph still reports it), and metadata `scopes`,
// which each refresh asks for (src/domain/refresher/refresh.ts reads it).
import type { ProviderDeclaration } from '../declaration.js';
import { FOLDER_FEATURES, OAUTH_SECRET } from '../shared/fields.js';

export const declarations = {
  onedrive: {
    name: 'Microsoft OneDrive',
    credentials: { kind: 'oauth', rotation: 'oauth-single-use' },
    secret: OAUTH_SECRET,
    metadata: [
      {
        key: 'scopes',
        label: 'Scopes (optional)',
        help: 'Space-separated; default offline_access Files.ReadWrite.All',
        type: 'string',
        required: false,
        sensitive: false,
      },
    ],
    hashes: ['quickxor', 'sha1'],
    // A listing gives no hash a sync could compare.
    listingHashes: [],
    features: FOLDER_FEATURES,
  },
} as const satisfies Record<string, ProviderDeclaration>;
