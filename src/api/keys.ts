// An API key as the API answers it (docs/api.md, "API keys"): the server's view type, the route's
// response schema (so /openapi.json) and the CLI's type come from these schemas.
import { type Static, Type } from 'typebox';
import { Timestamp } from './text.js';

export const ApiKey = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  created_at: Timestamp,
  expires_at: Type.Optional(Timestamp),
  last_used_at: Type.Optional(Timestamp),
  revoked_at: Type.Optional(Timestamp),
});
export type ApiKey = Static<typeof ApiKey>;

/** POST /v1/tokens's answer: the key with its bearer token, shown only then. */
export const CreatedApiKey = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  created_at: Timestamp,
  expires_at: Type.Optional(Timestamp),
  token: Type.String({ description: 'The bearer token, shown only in this response' }),
});
export type CreatedApiKey = Static<typeof CreatedApiKey>;
