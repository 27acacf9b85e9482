// What a store needs from the process besides the location: the egress guard for caller-supplied
// endpoints and the OAuth applications' settings (README, "Settings": FERRY_<PROVIDER>_…).
import type { Egress } from '../net/egress.js';
import type { OutboundTimeouts } from '../net/time-bounds.js';
import type { OAuthProvider } from '../providers.js';
import type { Secret } from '../secret.js';
import type { MemoryBudget } from './shared/memory.js';

export interface OAuthApp {
  clientId?: string;
  clientSecret?: Secret;
  tokenUrl: string;
  apiUrl: string;
  /** Where file contents are served, for providers that use another host (dropbox, box). */
  contentUrl?: string;
}

export interface StoreContext {
  egress: Egress;
  oauthApps: Record<OAuthProvider, OAuthApp>;
  /**
   * The process's transfer memory (FERRY_TRANSFER_MEMORY), shared by every store's uploads. Absent
   * (some store tests): each upload is bounded by its own part concurrency alone.
   */
  memory?: MemoryBudget;
  /** Time bounds of provider calls (FERRY_OUTBOUND_…); OUTBOUND_DEFAULTS when absent. */
  outbound?: OutboundTimeouts;
}

/** The production endpoints; each can be overridden by FERRY_<PROVIDER>_{TOKEN,API,CONTENT}_URL. */
export const DEFAULT_OAUTH_APPS: Record<OAuthProvider, OAuthApp> = {
  dropbox: {
    tokenUrl: 'https://api.dropboxapi.com/oauth2/token',
    apiUrl: 'https://api.dropboxapi.com',
    contentUrl: 'https://content.dropboxapi.com',
  },
  drive: {
    tokenUrl: 'https://oauth2.googleapis.com/token',
    apiUrl: 'https://www.googleapis.com',
  },
  onedrive: {
    tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    apiUrl: 'https://graph.microsoft.com/v1.0',
  },
  box: {
    tokenUrl: 'https://api.box.com/oauth2/token',
    apiUrl: 'https://api.box.com',
    contentUrl: 'https://upload.box.com/api',
  },
};

/**
 * Where an OAuth store gets the access token for each request (src/domain/refresher/access-tokens.ts):
 * the location's current token, not the one the store was opened with, and a way to have a token the
 * provider refused (401) renewed.
 */
export interface AccessTokenSource {
  /** The token to send now; renews it first when it has expired or is about to. */
  current(signal?: AbortSignal): Promise<Secret>;
  /**
   * The provider answered 401 to `rejected`: resolves with a renewed token (refreshed here, or by
   * another process a moment ago), or rejects with a FerryError saying why there is none. Absent: a
   * refused token is final.
   */
  renew?(rejected: Secret, signal?: AbortSignal): Promise<Secret>;
}

/** A location as a store sees it: the decrypted secret stays wrapped until the provider call. */
export interface StoreLocation {
  id: string;
  provider: import('../providers.js').Provider;
  metadata: Record<string, unknown>;
  secret: Secret<import('../providers.js').ProviderSecret>;
  /** OAuth providers: the live token. Without it the store sends the secret's access_token as it is. */
  tokens?: AccessTokenSource;
}
