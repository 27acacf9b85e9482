// An API key as the API answers it, and the bodies that make and change one (docs/api.md, "API keys"):
// the server's view type, the routes' schemas (so /openapi.json) and the CLI's type come from here.
import { type Static, Type } from 'typebox';
import { SCOPES } from './scopes.js';
import { Label, oneOf, Timestamp } from './text.js';

export { SCOPES, type Scope } from './scopes.js';
export const ScopeSchema = oneOf(SCOPES, 'read, transfer, remove, share or admin (docs/api.md, "Scopes")');
const Scopes = Type.Array(ScopeSchema, {
  description: 'What the key may do; a key created without scopes has all five',
});
/** The most locations one key may be limited to. */
export const KEY_LOCATIONS_MAX = 100;
const Locations = Type.Optional(
  Type.Array(Type.String({ format: 'uuid' }), {
    description: 'The only locations the key may address (ids); absent: every location of the workspace',
  }),
);

export const ApiKey = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  created_at: Timestamp,
  expires_at: Type.Optional(Timestamp),
  last_used_at: Type.Optional(Timestamp),
  revoked_at: Type.Optional(Timestamp),
  scopes: Scopes,
  locations: Locations,
});
export type ApiKey = Static<typeof ApiKey>;

/** POST /v1/tokens's answer: the key with its bearer token, shown only then. */
export const CreatedApiKey = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  created_at: Timestamp,
  expires_at: Type.Optional(Timestamp),
  scopes: Scopes,
  locations: Locations,
  token: Type.String({ description: 'The bearer token, shown only in this response' }),
});
export type CreatedApiKey = Static<typeof CreatedApiKey>;

/** POST /v1/tokens's body. */
export const CreateApiKeyBody = Type.Object(
  {
    name: Label(),
    expires_at: Type.Optional(Timestamp),
    scopes: Type.Optional(
      Type.Array(ScopeSchema, {
        minItems: 1,
        maxItems: SCOPES.length,
        uniqueItems: true,
        description:
          "What the new key may do: within the calling key's own scopes. Absent: all of the caller's",
      }),
    ),
    locations: Type.Optional(
      Type.Array(Type.String({ format: 'uuid', maxLength: 36 }), {
        minItems: 1,
        maxItems: KEY_LOCATIONS_MAX,
        uniqueItems: true,
        description:
          "The only locations the new key may address, by id: within the calling key's own. Absent: the caller's",
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const ApiKeyList = Type.Array(ApiKey);
export type ApiKeyList = Static<typeof ApiKeyList>;

/** PATCH /v1/tokens/{id}: a new name or expiry. */
export const UpdateApiKeyBody = Type.Object(
  {
    name: Type.Optional(Label()),
    expires_at: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);
export type UpdateApiKeyBody = Static<typeof UpdateApiKeyBody>;
