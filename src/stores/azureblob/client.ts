// Builds the @azure/storage-blob service client for one location: shared-key credentials from the
// secret, the endpoint from metadata (or the public one for the account), SDK retries and redirects
// off, every connection made through the egress guard, and every request bounded by the silence it
// may meet (FERRY_OUTBOUND_IDLE_SECONDS): the SDK itself bounds neither the wait for an answer nor a
// body that stops coming.
import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import type {
  BlobServiceClient,
  HttpOperationResponse,
  Pipeline,
  RequestPolicy,
  RequestPolicyFactory,
  WebResource,
} from '@azure/storage-blob';
import { invalid, isFerryError } from '../../errors.js';
import { AGENT_OPTIONS, type Egress } from '../../net/egress.js';
import { seconds } from '../../net/time-bounds.js';
import type { AccessKeySecret } from '../../providers.js';
import type { StoreLocation } from '../context.js';
import { azureBlob } from '../shared/sdk.js';
import { EGRESS_REFUSED } from './errors.js';

/** Storage account names: 3 to 24 lower-case letters and digits (they become a host name). */
const ACCOUNT_NAME = /^[a-z0-9]{3,24}$/;

export interface AzureClient {
  service: BlobServiceClient;
  /** The service URL without a trailing "/". */
  serviceUrl: string;
  /** The storage account name (not secret). */
  accountName: string;
  /** Ends this client's pooled connections. */
  close(): void;
}

/** `idleMs`: the longest silence on a connection while a request is on it (docs/api.md, "Time bounds"). */
export function createClient(location: StoreLocation, egress: Egress, idleMs: number): AzureClient {
  const serviceUrl = endpointOf(location);
  const secret = location.secret.reveal() as AccessKeySecret;
  const { BlobServiceClient, Pipeline, StorageSharedKeyCredential } = azureBlob();
  const credential = new StorageSharedKeyCredential(secret.access_key_id, secret.secret_access_key);
  // A Pipeline built from factories keeps the credential (found among the factories) and adds ours;
  // the SDK wraps unknown factories around the request before it is sent.
  const agents = {
    http: bounded(tagging(new http.Agent(AGENT_OPTIONS), egress.httpAgent), idleMs),
    https: bounded(tagging(new https.Agent(AGENT_OPTIONS), egress.httpsAgent), idleMs),
  };
  const pipeline = new Pipeline([credential, agentFactory(agents)], {
    // Stores never retry; the operations layer owns retries.
    retryOptions: { maxTries: 1 },
    // No redirect is followed, on the endpoint or off it: an answer that sends the client elsewhere
    // fails the call (docs/api.md, "Outbound calls").
    redirectOptions: { maxRetries: 0 },
  } as Pipeline['options']);
  return {
    service: new BlobServiceClient(serviceUrl, pipeline),
    serviceUrl,
    accountName: secret.access_key_id,
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/** The SDK's abort option, omitted when there is no signal (exactOptionalPropertyTypes). */
export function abortable(signal: AbortSignal | undefined): { abortSignal?: AbortSignal } {
  return signal ? { abortSignal: signal } : {};
}

function endpointOf(location: StoreLocation): string {
  const secret = location.secret.reveal() as AccessKeySecret;
  const endpoint = location.metadata.endpoint;
  if (endpoint === undefined) {
    if (!ACCOUNT_NAME.test(secret.access_key_id)) {
      throw invalid(
        'azureblob: access_key_id must be a storage account name (3-24 lower-case letters and digits)',
      );
    }
    return `https://${secret.access_key_id}.blob.core.windows.net`;
  }
  if (typeof endpoint !== 'string') throw invalid('azureblob: metadata endpoint must be a URL string');
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw invalid('azureblob: metadata endpoint is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid('azureblob: metadata endpoint must be an http or https URL');
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw invalid('azureblob: metadata endpoint must not carry credentials, a query or a fragment');
  }
  return url.toString().replace(/\/+$/, '');
}

/**
 * A request policy that hands every request our agent, so each connection is made (and its resolved
 * address checked) by the egress guard. The SDK's node client uses `request.agent` when set.
 */
function agentFactory(agents: { http: http.Agent; https: https.Agent }): RequestPolicyFactory {
  return {
    create(next: RequestPolicy): RequestPolicy {
      return {
        sendRequest(request: WebResource): Promise<HttpOperationResponse> {
          request.agent = request.url.startsWith('https:') ? agents.https : agents.http;
          return next.sendRequest(request);
        },
      };
    },
  };
}

type Connect = (
  options: object,
  callback: (err: Error | null, socket?: Duplex) => void,
) => Duplex | undefined;

/**
 * The guard's connections, pooled per store. The guard refuses with a FerryError, but the SDK rebuilds
 * socket errors from their message and `code` alone; tagging the code lets errors.ts tell a refusal
 * (invalid) from a failed connection (transient).
 */
function guardedConnect(
  guard: http.Agent,
  options: object,
  callback: Parameters<Connect>[1],
): Duplex | undefined {
  const tag = (err: Error | null) => {
    if (err && isFerryError(err)) Object.assign(err, { code: EGRESS_REFUSED });
  };
  const connect = (guard as unknown as { createConnection: Connect }).createConnection.bind(guard);
  const socket = connect(options, (err, s) => {
    tag(err);
    callback(err, s);
  });
  socket?.once('error', tag);
  return socket;
}

/** The agent, its connections made through the guard's (guardedConnect) for the store's own pool. */
function tagging<A extends http.Agent>(agent: A, guard: http.Agent): A {
  agent.createConnection = (options, callback) =>
    guardedConnect(guard, options, callback as Parameters<Connect>[1]) as Duplex;
  return agent;
}

/**
 * Every request the agent carries ends once its connection has been silent for `idleMs`: waiting for
 * the answer, or between two bytes of the answer's body (a download that stalls). Node applies a
 * request's timeout to its socket while the request holds it, and the agent's own (AGENT_OPTIONS) again
 * once the socket is free.
 */
function bounded<A extends http.Agent>(agent: A, idleMs: number): A {
  const pooled = agent as unknown as { addRequest(req: http.ClientRequest, options: object): void };
  const addRequest = pooled.addRequest.bind(agent);
  pooled.addRequest = (req, options) => {
    let answer: http.IncomingMessage | undefined;
    req.once('response', (res: http.IncomingMessage) => {
      answer = res;
    });
    req.setTimeout(idleMs, () => {
      // No status: errors.ts reads it as passing, and the work is tried again.
      const err = Object.assign(new Error(`no byte from the service for ${seconds(idleMs)}`), {
        code: 'ETIMEDOUT',
      });
      answer?.destroy(err);
      req.destroy(err);
    });
    addRequest(req, options);
  };
  return agent;
}
