// The error answers every route may give (docs/api.md, "Errors"): the standard shape, and a 409's when a
// bare name matched more than one location ("Addressing a location"). src/http/schemas.ts names them in
// /openapi.json; src/http/errors.ts sends them; the CLI and the console read them through the route map.
import { type Static, Type } from 'typebox';

export const ErrorBody = Type.Object(
  { error: Type.Integer({ description: 'The HTTP status code' }), message: Type.String() },
  { $id: 'Error', description: 'The standard error shape' },
);
export type ErrorBody = Static<typeof ErrorBody>;

export const AmbiguousName = Type.Object(
  {
    error: Type.String({ description: 'Tells the caller to resend with an id' }),
    name: Type.String(),
    candidates: Type.Array(
      Type.Object({
        id: Type.String({ format: 'uuid' }),
        provider: Type.String(),
        created_at: Type.String({ format: 'date-time' }),
        updated_at: Type.String({ format: 'date-time' }),
      }),
    ),
  },
  { description: 'A bare name matched more than one location' },
);
export type AmbiguousName = Static<typeof AmbiguousName>;
