// A location as the API answers it and the bodies of its operations (docs/api.md, "Locations"). The
// secret goes in and never comes out: no answer here has a field for it.
import { type Static, Type } from 'typebox';
import { declarationOf, PROVIDERS } from '../providers.js';
import { LOCATION_STATES } from '../states.js';
import { LocationRef, locationRefFields, Metadata, Provider } from './input.js';
import { Label, oneOf, Timestamp } from './text.js';

export { LocationRef };

/** A location without its secret: the answer of create, get, replace and rename. */
export const LocationProjection = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    provider: Provider,
    label: Type.String(),
    metadata: Type.Optional(Metadata),
  },
  { description: 'A location without its secret' },
);
export type LocationProjection = Static<typeof LocationProjection>;

const LocationStatus = oneOf(LOCATION_STATES);

/** A location as GET /v1/locations lists it. */
export const LocationSummary = Type.Object({
  id: Type.String({ format: 'uuid' }),
  provider: Provider,
  label: Type.String(),
  status: LocationStatus,
  validation_error: Type.Optional(Type.String()),
  created_at: Timestamp,
});
export type LocationSummary = Static<typeof LocationSummary>;

export const LocationList = Type.Array(LocationSummary);
export type LocationList = Static<typeof LocationList>;

/** POST /v1/locations/status's answer: where its credentials' refresh stands. */
export const LocationStatusView = Type.Object({
  status: LocationStatus,
  rotation_class: Type.Optional(Type.Union([Type.Literal('oauth-stable'), Type.Literal('oauth-single-use')])),
  access_token_expires_at: Type.Optional(Timestamp),
  refresh_requested: Type.Boolean(),
  consecutive_refresh_failures: Type.Integer(),
  last_refresh_attempt_at: Type.Optional(Timestamp),
  failure_reason: Type.Optional(Type.String()),
  last_refresh_error: Type.Optional(Type.String()),
});
export type LocationStatusView = Static<typeof LocationStatusView>;

/**
 * "{fields} for providers; …" from the stores' declarations: providers with the same secret fields
 * together, in the order of their credentials' kinds (access-key, oauth, service-account).
 */
function secretShapes(): string {
  const groups = new Map<string, { kind: number; providers: string[] }>();
  for (const provider of PROVIDERS) {
    const declared = declarationOf(provider);
    const fields = `{${declared.secret.map((f) => f.key).join(', ')}}`;
    const kind = ['access-key', 'oauth', 'service-account'].indexOf(declared.credentials.kind);
    const group = groups.get(fields) ?? { kind, providers: [] };
    group.providers.push(provider);
    groups.set(fields, group);
  }
  return [...groups]
    .sort(([, a], [, b]) => a.kind - b.kind)
    .map(([fields, { providers }]) => `${fields} for ${providers.join(', ')}`)
    .join('; ');
}

const SecretInput = Type.Unknown({ description: `Provider credentials: ${secretShapes()}` });

/** POST /v1/locations. */
export const CreateLocationBody = Type.Object(
  {
    provider: Provider,
    label: Label(),
    secret: SecretInput,
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false, required: ['provider', 'label', 'secret'] },
);
export type CreateLocationBody = Static<typeof CreateLocationBody>;

/** PUT /v1/locations: a new secret, and metadata. */
export const ReplaceSecretBody = Type.Object(
  { ...locationRefFields, secret: SecretInput, metadata: Type.Optional(Metadata) },
  { additionalProperties: false, required: ['secret'] },
);
export type ReplaceSecretBody = Static<typeof ReplaceSecretBody>;

/** PATCH /v1/locations: a new label. */
export const RenameLocationBody = Type.Object(
  { ...locationRefFields, label: Label() },
  { additionalProperties: false },
);
export type RenameLocationBody = Static<typeof RenameLocationBody>;
