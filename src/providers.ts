// The ten storage providers and what ferry knows about each before it talks to one: the shape of its
// secret (docs/api.md, "Secrets by provider") and how its credentials rotate ("Location health").

export const PROVIDERS = [
  's3',
  'r2',
  'wasabi',
  'b2',
  'gcs',
  'azureblob',
  'dropbox',
  'drive',
  'onedrive',
  'box',
] as const;

export type Provider = (typeof PROVIDERS)[number];

export type SecretGroup = 'access-key' | 'oauth' | 'service-account';

export type RotationClass = 'oauth-stable' | 'oauth-single-use';

export const S3_FAMILY = ['s3', 'r2', 'wasabi', 'b2'] as const;
export type S3FamilyProvider = (typeof S3_FAMILY)[number];

export const OAUTH_PROVIDERS = ['dropbox', 'drive', 'onedrive', 'box'] as const;
export type OAuthProvider = (typeof OAUTH_PROVIDERS)[number];

export function isProvider(value: string): value is Provider {
  return (PROVIDERS as readonly string[]).includes(value);
}

export function isOAuthProvider(provider: Provider): provider is OAuthProvider {
  return (OAUTH_PROVIDERS as readonly string[]).includes(provider);
}

export function isS3Family(provider: Provider): provider is S3FamilyProvider {
  return (S3_FAMILY as readonly string[]).includes(provider);
}

export function secretGroup(provider: Provider): SecretGroup {
  if (isOAuthProvider(provider)) return 'oauth';
  if (provider === 'gcs') return 'service-account';
  return 'access-key';
}

/** Dropbox and Drive keep their refresh token; OneDrive and Box replace it on every refresh. */
export function rotationClass(provider: Provider): RotationClass | undefined {
  switch (provider) {
    case 'dropbox':
    case 'drive':
      return 'oauth-stable';
    case 'onedrive':
    case 'box':
      return 'oauth-single-use';
    default:
      return undefined;
  }
}

/** Buckets or containers at the root: an empty listing path lists them (docs/api.md, "Listing objects"). */
export function hasBuckets(provider: Provider): boolean {
  return !isOAuthProvider(provider);
}

/** What a top-level entry of a bucket store is called: a container on azureblob, a bucket elsewhere. */
export function bucketWord(provider: Provider): 'bucket' | 'container' {
  return provider === 'azureblob' ? 'container' : 'bucket';
}

// Secret shapes, after validation (src/domain/locations/secret-shape.ts).

/** S3 family and azureblob. For azureblob the key id is the storage account name. */
export interface AccessKeySecret {
  access_key_id: string;
  secret_access_key: string;
}

export interface OAuthSecret {
  access_token: string;
  refresh_token: string;
  /** RFC 3339 time at which access_token expires. */
  expiry: string;
}

/** The parts of a Google service-account key file that ferry uses; other fields are kept as given. */
export interface ServiceAccountKey {
  type: 'service_account';
  client_email: string;
  private_key: string;
  token_uri?: string;
  project_id?: string;
  private_key_id?: string;
  [field: string]: unknown;
}

export interface ServiceAccountSecret {
  service_account_json: ServiceAccountKey;
}

export type ProviderSecret = AccessKeySecret | OAuthSecret | ServiceAccountSecret;
