// GET /v1/providers (docs/api.md, "Providers"): every provider as its store declares it
// (src/stores/*/declaration.ts): the fields of its secret and metadata, the hash kinds it reports and
// its features. The console builds its location forms from this answer, so it names no field itself.
import { type Static, Type } from 'typebox';
import { declarationOf, PROVIDERS } from '../providers.js';
import {
  BUCKET_WORDS,
  CREDENTIAL_KINDS,
  FIELD_TYPES,
  type FieldDeclaration,
  HASH_KINDS,
  ROTATION_CLASSES,
} from '../stores/declaration.js';
import { Provider } from './input.js';
import { oneOf } from './text.js';

/** One field of a secret or of metadata. */
export const ProviderField = Type.Object({
  key: Type.String({ description: 'its key in the secret or metadata object' }),
  label: Type.String({ description: 'what a form calls it' }),
  help: Type.Optional(Type.String()),
  type: oneOf(
    FIELD_TYPES,
    'string: non-empty text; time: RFC 3339; service-account-key: a Google key file, as JSON or its text; url: http(s); boolean',
  ),
  required: Type.Boolean({ description: 'needed in every case (every secret field is)' }),
  sensitive: Type.Boolean({ description: 'a form hides what is typed' }),
});
export type ProviderField = Static<typeof ProviderField>;

const HashKind = oneOf(HASH_KINDS);

/** One provider. */
export const ProviderView = Type.Object({
  id: Provider,
  name: Type.String(),
  credentials: oneOf(CREDENTIAL_KINDS),
  rotation_class: Type.Optional(oneOf(ROTATION_CLASSES, 'OAuth providers: how the refresh token rotates')),
  secret: Type.Array(ProviderField, { description: 'a secret has exactly these fields' }),
  metadata: Type.Array(ProviderField, {
    description: 'the metadata keys the provider reads; others are kept as given',
  }),
  hashes: Type.Array(HashKind, { description: 'hash kinds the provider reports for an object' }),
  listing_hashes: Type.Array(HashKind, {
    description: 'hash kinds its listings report, which a checksum sync compares',
  }),
  features: Type.Object({
    bucket_listing: Type.Boolean({ description: 'an empty path lists buckets (containers)' }),
    bucket_word: Type.Optional(oneOf(BUCKET_WORDS)),
    copy: Type.Boolean({ description: 'server-side copy' }),
    move: Type.Boolean({ description: 'server-side move' }),
    resumable: Type.Boolean({ description: 'uploads resumed from their last part by any process' }),
    create_bucket: Type.Boolean({ description: 'POST /v1/buckets' }),
  }),
});
export type ProviderView = Static<typeof ProviderView>;

export const ProviderList = Type.Object({ providers: Type.Array(ProviderView) });
export type ProviderList = Static<typeof ProviderList>;

function fieldView(field: FieldDeclaration): ProviderField {
  const { key, label, help, type, required, sensitive } = field;
  return { key, label, ...(help === undefined ? {} : { help }), type, required, sensitive };
}

/** The answer of GET /v1/providers, built from the declarations (the same for every caller). */
export function providerList(): ProviderList {
  return {
    providers: PROVIDERS.map((id): ProviderView => {
      const d = declarationOf(id);
      const f = d.features;
      return {
        id,
        name: d.name,
        credentials: d.credentials.kind,
        ...(d.credentials.kind === 'oauth' ? { rotation_class: d.credentials.rotation } : {}),
        secret: d.secret.map(fieldView),
        metadata: d.metadata.map(fieldView),
        hashes: [...d.hashes],
        listing_hashes: [...d.listingHashes],
        features: {
          bucket_listing: f.bucketListing,
          ...(f.bucketWord === undefined ? {} : { bucket_word: f.bucketWord }),
          copy: f.copy,
          move: f.move,
          resumable: f.resumable,
          create_bucket: f.createBucket,
        },
      };
    }),
  };
}
