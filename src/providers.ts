// The storage providers and what ferry knows about each before it talks to one, all read from the
// stores' own declarations (src/stores/declarations.ts): the provider list, how each one's credentials
// rotate (docs/api.md, "Location health"), whether it has buckets. The shape of each secret is checked
// against the same declarations (src/domain/locations/secret-shape.ts).
import type { HashKind, ProviderDeclaration } from './stores/declaration.js';
import { DECLARATIONS, S3_FAMILY_DECLARATIONS } from './stores/declarations.js';

type Declarations = typeof DECLARATIONS;

export type Provider = keyof Declarations;

/** Every provider, in the order the stores are registered. */
export const PROVIDERS = Object.keys(DECLARATIONS) as readonly Provider[];

export type SecretGroup = ProviderDeclaration['credentials']['kind'];

export type RotationClass = Extract<ProviderDeclaration['credentials'], { kind: 'oauth' }>['rotation'];

export type S3FamilyProvider = keyof typeof S3_FAMILY_DECLARATIONS;
/** The providers the s3 store opens. */
export const S3_FAMILY = Object.keys(S3_FAMILY_DECLARATIONS) as readonly S3FamilyProvider[];

export type OAuthProvider = {
  [P in Provider]: Declarations[P]['credentials'] extends { kind: 'oauth' } ? P : never;
}[Provider];
/** The providers whose OAuth tokens the refresher renews. */
export const OAUTH_PROVIDERS = PROVIDERS.filter(
  (p) => DECLARATIONS[p].credentials.kind === 'oauth',
) as readonly OAuthProvider[];

export function isProvider(value: string): value is Provider {
  return Object.hasOwn(DECLARATIONS, value);
}

/** What the provider's store declares: its secret and metadata fields, hash kinds and features. */
export function declarationOf(provider: Provider): ProviderDeclaration {
  return DECLARATIONS[provider];
}

export function isOAuthProvider(provider: Provider): provider is OAuthProvider {
  return declarationOf(provider).credentials.kind === 'oauth';
}

export function isS3Family(provider: Provider): provider is S3FamilyProvider {
  return Object.hasOwn(S3_FAMILY_DECLARATIONS, provider);
}

export function secretGroup(provider: Provider): SecretGroup {
  return declarationOf(provider).credentials.kind;
}

/** oauth-stable keeps the refresh token (dropbox, drive); oauth-single-use replaces it at every refresh. */
export function rotationClass(provider: Provider): RotationClass | undefined {
  const { credentials } = declarationOf(provider);
  return credentials.kind === 'oauth' ? credentials.rotation : undefined;
}

/** Buckets or containers at the root: an empty listing path lists them (docs/api.md, "Listing objects"). */
export function hasBuckets(provider: Provider): boolean {
  return declarationOf(provider).features.bucketListing;
}

/** What a top-level entry of a bucket store is called: a container on azureblob, a bucket elsewhere. */
export function bucketWord(provider: Provider): 'bucket' | 'container' {
  return declarationOf(provider).features.bucketWord ?? 'bucket';
}

/** Hash kinds the provider's listing reports for an object, with no request per object. */
export function listingHashes(provider: Provider): readonly HashKind[] {
  return declarationOf(provider).listingHashes;
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
