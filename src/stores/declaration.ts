// What a store declares about its provider before any location is opened (after rclone's RegInfo
// option schemas and fs.Features): the fields of its secret and metadata, the hash kinds it reports,
// and its optional features. Each store folder declares its own provider(s) in its declaration.ts;
// src/stores/declarations.ts registers them. Everything that needs provider knowledge without a
// location reads it from there: src/providers.ts (the provider list, credentials, rotation),
// src/domain/locations/secret-shape.ts (the secret's fields), src/engine/sync-plan.ts (the hashes a
// listing reports), and GET /v1/providers (docs/api.md, "Providers"), from which the console builds
// its location forms.
//
// A declaration is plain data and imports nothing, so that reading it loads no store (and the
// console's type-check, which reads it through src/api/providers.ts, needs no Node types).
// The wire shape of a declaration is in src/api/providers.ts.

/** The hash kinds a store may report (ObjectInfo.hashes, Entry.hashes in contract.ts). */
export const HASH_KINDS = ['md5', 'sha1', 'sha256', 'crc32c', 'dropbox', 'quickxor'] as const;
export type HashKind = (typeof HASH_KINDS)[number];

/**
 * What a field holds, which says how it is checked (secrets: src/domain/locations/secret-shape.ts) and
 * how a form asks for it.
 * - string: a non-empty string.
 * - time: an RFC 3339 date-time, as a string.
 * - service-account-key: a Google service-account key file, as a JSON object or its text.
 * - url: an http or https URL.
 * - boolean: true or false.
 */
export const FIELD_TYPES = ['string', 'time', 'service-account-key', 'url', 'boolean'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** One field of a provider's secret or metadata (rclone's fs.Option). */
export interface FieldDeclaration {
  /** Its key in the secret or metadata object. */
  readonly key: string;
  /** What a form calls it, as a person reads it ("(optional)" where it is). */
  readonly label: string;
  /** A line that tells what to give, or what happens without it. */
  readonly help?: string;
  readonly type: FieldType;
  /** The location needs it in every case. Every secret field is; no metadata field is. */
  readonly required: boolean;
  /**
   * A form hides what is typed (rclone's IsPassword / Sensitive). Every secret field is sensitive but
   * those that are no secret (azureblob's account name is in every blob's URL).
   */
  readonly sensitive: boolean;
}

export const CREDENTIAL_KINDS = ['access-key', 'service-account', 'oauth'] as const;
export const ROTATION_CLASSES = ['oauth-stable', 'oauth-single-use'] as const;
export const BUCKET_WORDS = ['bucket', 'container'] as const;

/** What a provider's credentials are and how they are kept fresh (docs/api.md, "Location health"). */
export type Credentials =
  /** An access key pair; nothing to refresh. */
  | { readonly kind: 'access-key' }
  /** A service-account key file; nothing to refresh. */
  | { readonly kind: 'service-account' }
  /** OAuth tokens the refresher renews; oauth-single-use when each refresh replaces the refresh token. */
  | { readonly kind: 'oauth'; readonly rotation: (typeof ROTATION_CLASSES)[number] };

/** The optional capabilities a store of this provider has (the Store's StoreFeatures, as booleans). */
export interface FeatureDeclaration {
  /** An empty path lists buckets (containers): StoreFeatures.bucketListing. */
  readonly bucketListing: boolean;
  /** What its top-level entries are called, on a bucket store. */
  readonly bucketWord?: (typeof BUCKET_WORDS)[number];
  /** Server-side copy within one account: StoreFeatures.copy. */
  readonly copy: boolean;
  /** Server-side move: StoreFeatures.move. */
  readonly move: boolean;
  /** Uploads another process can continue: StoreFeatures.resumable. */
  readonly resumable: boolean;
  /** Creating buckets (containers): StoreFeatures.createBucket. */
  readonly createBucket: boolean;
}

export interface ProviderDeclaration {
  /** The provider's name as people know it. */
  readonly name: string;
  readonly credentials: Credentials;
  /** The secret's fields: a secret has exactly these (docs/api.md, "Secrets by provider"). */
  readonly secret: readonly FieldDeclaration[];
  /** The metadata keys the store reads (docs/api.md, "Metadata"); other keys are kept as given. */
  readonly metadata: readonly FieldDeclaration[];
  /** Hash kinds stat() reports and a write is proven by: StoreFeatures.hashes. */
  readonly hashes: readonly HashKind[];
  /** Hash kinds a listing reports for an object (Entry.hashes), which a sync compares by checksum. */
  readonly listingHashes: readonly HashKind[];
  readonly features: FeatureDeclaration;
}
