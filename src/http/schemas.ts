// Request and response schemas shared by several routes. One TypeBox schema serves validation, the
// handler's types and /openapi.json. Every request body rejects fields it does not know, so a misspelt
// option is never ignored (docs/api.md, "Errors").
import { type Static, type TSchema, type TStringOptions, Type } from 'typebox';
import {
  ID_MAX_LENGTH,
  IdText,
  LABEL_MAX_LENGTH,
  Label,
  MULTI_LINE,
  NO_NUL,
  oneOf,
  PATH_MAX_LENGTH,
  Path,
  SINGLE_LINE,
  TIMESTAMP_MAX_LENGTH,
  text,
} from '../api/text.js';
import { METADATA_MAX_BYTES, METADATA_MAX_DEPTH } from '../domain/locations/metadata.js';
import { SCHEDULED_AT_MAX } from '../domain/sends/schedule.js';
import { ADDRESS_MAX, MESSAGE_MAX } from '../domain/sends/sends.js';
import { PASSWORD_MAX } from '../domain/shares/shares.js';
import { MAX_SOURCES } from '../domain/transfers/operations.js';
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

export { Timestamp, TimestampText } from '../api/text.js';
// The strings shared with the response shapes (Label, Path, IdText, Timestamp, oneOf) and their patterns
// live in src/api/text.ts; they are re-exported here for the routes.
export { IdText, Label, oneOf, Path };

// Input limits (docs/api.md, "Input"). Every string a caller sends has a maximum length, and refuses
// what cannot be stored on both databases or makes no sense in it: PostgreSQL text cannot hold U+0000,
// so no field takes it; names, addresses and the like take no control character at all. A lone
// surrogate is refused in every string, whatever its schema, by src/http/input.ts.
export const INPUT_MAX = {
  label: LABEL_MAX_LENGTH,
  path: PATH_MAX_LENGTH,
  url: 8192,
  text: MESSAGE_MAX,
  /** RFC 5321's limit on a forward path. */
  address: ADDRESS_MAX,
  scheduledAt: SCHEDULED_AT_MAX,
  /** IANA zone names are at most 32 characters today. */
  timezone: 64,
  password: PASSWORD_MAX,
  id: ID_MAX_LENGTH,
  cursor: 256,
  timestamp: TIMESTAMP_MAX_LENGTH,
  /** Closed-list words checked by the domain (webhook event types). */
  word: 64,
  /** Sources of one move, pull or remove. */
  sources: MAX_SOURCES,
  metadataBytes: METADATA_MAX_BYTES,
  metadataDepth: METADATA_MAX_DEPTH,
} as const;

/** What a failed `pattern` says (src/http/errors.ts), by pattern. */
export const PATTERN_RULES: Readonly<Record<string, string>> = {
  [SINGLE_LINE]: 'must not contain control characters (U+0000 to U+001F, U+007F)',
  [MULTI_LINE]: 'must not contain control characters other than tab and line breaks',
  [NO_NUL]: 'must not contain U+0000 (NUL)',
  '^[0-9]+$': 'must be a whole number',
};

/** `"literal": true`: every path in the body is exact bytes, never a pattern (docs/api.md, "Exact names"). */
export const Literal = () =>
  Type.Optional(
    Type.Boolean({ description: 'every path in this body is exact bytes, never a pattern (default false)' }),
  );
/** An http(s) URL. */
export const Url = text(INPUT_MAX.url, SINGLE_LINE, 1);
/** Free text written by a person: a message. */
export const Text = text(INPUT_MAX.text, MULTI_LINE, 0);
/** An e-mail address (the domain checks its form, spaces too: src/domain/sends/sends.ts). */
export const Address = text(INPUT_MAX.address, SINGLE_LINE, 1);
/** A share or send password: hashed, never stored as text, so any character but a lone surrogate. */
export const Password = (options: TStringOptions = {}) =>
  Type.String({ minLength: 1, maxLength: INPUT_MAX.password, ...options });
/** A short word from a list the domain checks. */
export const Word = text(INPUT_MAX.word, SINGLE_LINE, 1);
/** A time in words or ISO 8601, read by src/domain/sends/schedule.ts. */
export const ScheduleText = text(INPUT_MAX.scheduledAt, SINGLE_LINE, 1);
/** An IANA zone name. */
export const Timezone = text(INPUT_MAX.timezone, SINGLE_LINE, 1);

export const Provider = oneOf<ProviderName>(PROVIDERS, 'Storage backend');

export const Metadata = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  description: `Non-secret provider configuration, at most ${METADATA_MAX_BYTES / 1024} KiB of JSON nested at most ${METADATA_MAX_DEPTH} levels`,
});

/** name and/or id (docs/api.md, "Addressing a location"). */
export const locationRefFields = {
  name: Type.Optional(Label({ description: 'The location label' })),
  id: Type.Optional(IdText({ description: 'The location UUID' })),
};

export const LocationRef = Type.Object(locationRefFields, { additionalProperties: false });

/** `{id}` in a URL path. */
export const IdParam = Type.Object({ id: IdText() });

/** `?limit=&cursor=` of every list (docs/api.md, "Polling"). */
export const Paging = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^[0-9]+$', maxLength: 10 })),
    cursor: Type.Optional(text(INPUT_MAX.cursor, SINGLE_LINE, 0)()),
  },
  { additionalProperties: false },
);
