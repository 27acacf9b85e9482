// Request and response schemas shared by several routes. One TypeBox schema serves validation, the
// handler's types and /openapi.json. Every request body rejects fields it does not know, so a misspelt
// option is never ignored (docs/api.md, "Errors").
import { type Static, type TSchema, Type } from 'typebox';
import { PROVIDERS, type Provider as ProviderName } from '../providers.js';

export const ErrorBody = Type.Object(
  { error: Type.Integer({ description: 'The HTTP status code' }), message: Type.String() },
  { $id: 'Error', description: 'The standard error shape' },
);

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

const ref = (id: string) => Type.Unsafe<Static<typeof ErrorBody>>({ $ref: `${id}#` });

/** Error responses for the OpenAPI description; the error handler itself sends them. */
export function errors(...codes: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const code of codes) {
    out[code] = code === 409 ? Type.Union([ref('Error'), AmbiguousName]) : ref('Error');
  }
  return out;
}

/** 202 and 204 answers carry no body. */
export const NoContent = Type.Unsafe<undefined>({ description: 'No body' });

export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339' });

/** A string from a closed list (src/domain/states.ts, src/providers.ts): an enum in /openapi.json. */
export function oneOf<const T extends string>(values: readonly T[], description?: string) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });
}

export const Provider = oneOf<ProviderName>(PROVIDERS, 'Storage backend');

export const Metadata = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  description: 'Non-secret provider configuration, at most 16 KiB of JSON',
});

/** name and/or id (docs/api.md, "Addressing a location"). */
export const locationRefFields = {
  name: Type.Optional(Type.String({ minLength: 1, description: 'The location label' })),
  id: Type.Optional(Type.String({ description: 'The location UUID' })),
};

export const LocationRef = Type.Object(locationRefFields, { additionalProperties: false });
