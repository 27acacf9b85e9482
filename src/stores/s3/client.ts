// Builds the AWS SDK client for one S3-family location. The secret is revealed here and only here.
// Every connection goes through the egress guard's agents, so a metadata `endpoint` (or a redirect)
// can reach only public addresses and FERRY_EGRESS_ALLOW entries; AWS's own endpoints pass it anyway.
import type { S3Client } from '@aws-sdk/client-s3';
import { FerryError } from '../../errors.js';
import { OUTBOUND_DEFAULTS } from '../../net/time-bounds.js';
import type { AccessKeySecret, S3FamilyProvider } from '../../providers.js';
import type { StoreContext, StoreLocation } from '../context.js';
import { awsS3 } from '../shared/sdk.js';
import { resolveConnection, type S3Connection } from './endpoint.js';

export interface S3Handle {
  provider: S3FamilyProvider;
  client: S3Client;
  connection: S3Connection;
  /** Non-secret identity: provider, endpoint (or "aws"), access key id. */
  account: string;
}

function accessKey(location: StoreLocation): AccessKeySecret {
  const secret = location.secret.reveal() as Partial<AccessKeySecret>;
  if (typeof secret.access_key_id !== 'string' || typeof secret.secret_access_key !== 'string') {
    throw new FerryError('invalid', `location ${location.id} has no access key secret`);
  }
  return { access_key_id: secret.access_key_id, secret_access_key: secret.secret_access_key };
}

export function createClient(
  provider: S3FamilyProvider,
  location: StoreLocation,
  ctx: StoreContext,
): S3Handle {
  const { S3Client } = awsS3();
  const connection = resolveConnection(provider, location.metadata);
  const key = accessKey(location);
  const client = new S3Client({
    region: connection.region,
    ...(connection.endpoint === undefined ? {} : { endpoint: connection.endpoint }),
    forcePathStyle: connection.forcePathStyle,
    credentials: { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key },
    // Stores never retry: the operations layer owns retries and backoff.
    maxAttempts: 1,
    requestChecksumCalculation: connection.checksums,
    responseChecksumValidation: connection.checksums,
    requestHandler: {
      httpAgent: ctx.egress.httpAgent,
      httpsAgent: ctx.egress.httpsAgent,
      connectionTimeout: 30_000,
      // A connection silent this long while a call is on it (waiting for the answer, or between two
      // bytes of a body) is dead: FERRY_OUTBOUND_IDLE_SECONDS (docs/api.md, "Time bounds"). It
      // surfaces as a transient error, and the call is tried again.
      socketTimeout: (ctx.outbound ?? OUTBOUND_DEFAULTS).idleMs,
    },
    // Keep the SDK quiet: errors reach the caller as FerryErrors.
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  const account = `${provider} ${connection.endpoint ?? 'aws'} ${key.access_key_id}`;
  return { provider, client, connection, account };
}

/** The SDK's per-call options for an optional abort signal. */
export function abortable(signal: AbortSignal | undefined): { abortSignal?: AbortSignal } {
  return signal ? { abortSignal: signal } : {};
}
