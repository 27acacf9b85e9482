// Builds the @google-cloud/storage client for one location: the service-account key from the secret
// (its token_uri honoured by auth.ts), the API base from metadata `endpoint` or Google's, always
// reached through the egress gateway (gateway.ts), the project from metadata `project_id` or the key,
// and no retries.
import type http from 'node:http';
import type { Storage } from '@google-cloud/storage';
import { invalid } from '../../errors.js';
import type { Egress } from '../../net/egress.js';
import { OUTBOUND_DEFAULTS, type OutboundTimeouts } from '../../net/time-bounds.js';
import type { ServiceAccountKey, ServiceAccountSecret } from '../../providers.js';
import { Secret } from '../../secret.js';
import type { StoreLocation } from '../context.js';
import { googleStorage } from '../shared/sdk.js';
import { type Gateway, startGateway } from './gateway.js';

export const DEFAULT_ENDPOINT = 'https://storage.googleapis.com';
/** Google's token endpoint, where a key file names none (auth.ts). */
export const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';

/** What open() learns from the location without any I/O; invalid settings fail here. */
export interface GcsSettings {
  /** The API base the location names, without a trailing "/"; undefined: Google's. */
  endpoint: string | undefined;
  tokenUri: string;
  projectId: string | undefined;
  key: Secret<ServiceAccountKey>;
}

export interface GcsClient {
  storage: Storage;
  close(): Promise<void>;
}

export function readSettings(location: StoreLocation): GcsSettings {
  const key = (location.secret.reveal() as ServiceAccountSecret).service_account_json;
  if (typeof key !== 'object' || key === null || typeof key.private_key !== 'string') {
    throw invalid('gcs: the secret holds no service account key');
  }
  const endpoint = location.metadata.endpoint;
  const project = location.metadata.project_id ?? key.project_id;
  return {
    endpoint: endpoint === undefined ? undefined : httpUrl(endpoint, 'metadata endpoint'),
    tokenUri: httpUrl(key.token_uri ?? DEFAULT_TOKEN_URI, 'the key file token_uri'),
    projectId: typeof project === 'string' && project !== '' ? project : undefined,
    key: new Secret(key),
  };
}

export async function createClient(
  settings: GcsSettings,
  egress: Egress,
  timeouts?: OutboundTimeouts,
): Promise<GcsClient> {
  // Google's own endpoint goes through the gateway too: the library would otherwise connect, and
  // follow redirects, with agents of its own (docs/api.md, "Outbound calls").
  const gateway: Gateway = await startGateway(
    settings.endpoint ?? DEFAULT_ENDPOINT,
    egress,
    (timeouts ?? OUTBOUND_DEFAULTS).idleMs,
  );
  const agentFor = (url: URL): http.Agent | undefined => {
    if (url.href.startsWith(`${gateway.url}/`)) return undefined; // our own loopback gateway
    // The gateway hands the library no other URL; should one appear, the guard still checks it.
    return url.protocol === 'https:' ? egress.httpsAgent : egress.httpAgent;
  };
  // auth.ts extends google-auth-library's client: loaded with the SDK, on a gcs store's first use
  // (../shared/sdk.ts).
  const { ServiceAccountAuth } = await import('./auth.js');
  const { Storage } = googleStorage();
  const auth = new ServiceAccountAuth({
    key: settings.key,
    tokenUri: settings.tokenUri,
    dispatcher: egress.dispatcher,
    agentFor,
    timeouts,
  });
  if (settings.projectId) auth.projectId = settings.projectId;
  const storage = new Storage({
    apiEndpoint: gateway.url,
    useAuthWithCustomEndpoint: true,
    ...(settings.projectId ? { projectId: settings.projectId } : {}),
    authClient: auth,
    // Stores never retry: one attempt, every failure reported as it came.
    retryOptions: { autoRetry: false, maxRetries: 0, retryableErrorFn: () => false },
  });
  return {
    storage,
    async close() {
      await gateway.close();
    },
  };
}

function httpUrl(value: unknown, what: string): string {
  if (typeof value !== 'string') throw invalid(`gcs: ${what} must be a URL string`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(`gcs: ${what} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`gcs: ${what} must be an http or https URL`);
  }
  if (url.username !== '' || url.password !== '' || url.hash !== '') {
    throw invalid(`gcs: ${what} must not carry credentials or a fragment`);
  }
  if (what === 'metadata endpoint' && url.search !== '') throw invalid(`gcs: ${what} must not carry a query`);
  return url.toString().replace(/\/+$/, '');
}
