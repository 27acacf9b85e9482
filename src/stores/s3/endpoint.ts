// Where an S3-family location lives and how to talk to it, from provider and metadata alone
// (docs/api.md, "Metadata"): the endpoint each provider derives, metadata `endpoint` overriding it with
// path-style addressing by default, and the per-provider checksum choice.
import { FerryError } from '../../errors.js';
import type { S3FamilyProvider } from '../../providers.js';

export interface S3Connection {
  /** undefined: the SDK derives the AWS endpoint from the region. */
  endpoint: string | undefined;
  region: string;
  forcePathStyle: boolean;
  /**
   * The SDK's flexible checksums. 'WHEN_SUPPORTED' (the SDK default) sends aws-chunked bodies with
   * trailing CRC32s, which AWS itself understands but several S3-compatible servers store verbatim or
   * reject (s3rver stored a 100,000-byte stream as 100,052 bytes; R2 and B2 have had the same trouble).
   * Those get 'WHEN_REQUIRED'; ferry still checks integrity with Content-MD5 on single requests and
   * verifies every stored size.
   */
  checksums: 'WHEN_SUPPORTED' | 'WHEN_REQUIRED';
  /** True when the endpoint came from the caller (metadata `endpoint`), not from ferry's table. */
  callerEndpoint: boolean;
}

/** A DNS label-ish token: keeps metadata from smuggling another host into a derived endpoint. */
const TOKEN = /^[a-z0-9][a-z0-9-]{0,62}$/i;

function stringField(metadata: Record<string, unknown>, field: string): string | undefined {
  const value = metadata[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new FerryError('invalid', `metadata ${field} must be a string`);
  return value;
}

function token(metadata: Record<string, unknown>, field: string, fallback?: string): string {
  const value = stringField(metadata, field) ?? fallback;
  if (value === undefined) throw new FerryError('invalid', `metadata ${field} is required for this provider`);
  if (!TOKEN.test(value))
    throw new FerryError('invalid', `metadata ${field} "${value}" is not a valid ${field}`);
  return value;
}

function parseEndpoint(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw new FerryError('invalid', `metadata endpoint "${raw}" is not a URL`, { cause });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FerryError('invalid', 'metadata endpoint must be an http or https URL');
  }
  if (url.username || url.password) {
    throw new FerryError('invalid', 'metadata endpoint must not carry credentials');
  }
  if (url.search || url.hash) {
    throw new FerryError('invalid', 'metadata endpoint must not have a query or fragment');
  }
  return url.href.replace(/\/$/, '');
}

export function resolveConnection(
  provider: S3FamilyProvider,
  metadata: Record<string, unknown>,
): S3Connection {
  const override = stringField(metadata, 'endpoint');
  const pathStyle = metadata.force_path_style;
  if (pathStyle !== undefined && typeof pathStyle !== 'boolean') {
    throw new FerryError('invalid', 'metadata force_path_style must be true or false');
  }

  const callerEndpoint = override !== undefined;
  let derived: string | undefined;
  let region: string;
  switch (provider) {
    case 's3':
      // The SDK knows AWS's endpoint for each region.
      region = token(metadata, 'region', 'us-east-1');
      derived = undefined;
      break;
    case 'r2':
      // developers.cloudflare.com/r2/api/s3/api: https://<ACCOUNT_ID>.r2.cloudflarestorage.com, region "auto".
      region = token(metadata, 'region', 'auto');
      derived = callerEndpoint
        ? undefined
        : `https://${token(metadata, 'account_id')}.r2.cloudflarestorage.com`;
      break;
    case 'wasabi':
      // docs.wasabi.com service URLs: us-east-1 is the bare s3.wasabisys.com, others s3.<region>.wasabisys.com.
      region = token(metadata, 'region', 'us-east-1');
      derived = region === 'us-east-1' ? 'https://s3.wasabisys.com' : `https://s3.${region}.wasabisys.com`;
      break;
    case 'b2':
      // Backblaze S3-compatible API: https://s3.<region>.backblazeb2.com, the region (e.g. us-west-004)
      // being part of the bucket's endpoint, so there is no default unless an endpoint is given.
      region = token(metadata, 'region', callerEndpoint ? 'us-east-1' : undefined);
      derived = `https://s3.${region}.backblazeb2.com`;
      break;
  }

  return {
    endpoint: override !== undefined ? parseEndpoint(override) : derived,
    region,
    // Path-style for every endpoint but AWS's own: bucket names with dots break virtual-hosted TLS,
    // and Wasabi, R2 and B2 all accept it (Wasabi recommends it).
    forcePathStyle: pathStyle ?? (provider !== 's3' || callerEndpoint),
    checksums: provider === 's3' && !callerEndpoint ? 'WHEN_SUPPORTED' : 'WHEN_REQUIRED',
    callerEndpoint,
  };
}
