// What the tests of the four OAuth stores (dropbox, drive, onedrive, box) share: a store context
// pointing the provider's endpoints at its fake, and a location holding tokens the fake's
// authorization server issued (or any string, for a token the fake will refuse).
import { randomBytes } from 'node:crypto';
import { createEgress } from '../../src/net/egress.js';
import { Secret } from '../../src/secret.js';
import { DEFAULT_OAUTH_APPS, type StoreContext, type StoreLocation } from '../../src/stores/context.js';

export type OAuthStoreProvider = 'dropbox' | 'drive' | 'onedrive' | 'box';

/** A fake's endpoints, as ferry's OAuthApp names them. */
export interface FakeApp {
  tokenUrl: string;
  apiUrl: string;
  contentUrl?: string;
}

export function oauthContext(provider: OAuthStoreProvider, fake: { app: FakeApp }): StoreContext {
  return { egress: createEgress([]), oauthApps: { ...DEFAULT_OAUTH_APPS, [provider]: fake.app } };
}

/** A location whose secret holds these tokens; the access token counts as expiring now. */
export function oauthLocation(
  provider: OAuthStoreProvider,
  accessToken: string,
  refreshToken = 'unused',
  metadata: Record<string, unknown> = {},
): StoreLocation {
  return {
    id: `loc-${provider}-${randomBytes(4).toString('hex')}`,
    provider,
    metadata,
    secret: new Secret({
      access_token: accessToken,
      refresh_token: refreshToken,
      expiry: new Date().toISOString(),
    }),
  };
}
