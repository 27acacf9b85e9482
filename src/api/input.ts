// The fields a request is made of (docs/api.md, "Input"): the limits of what a caller may send and the
// schemas of the fields several bodies share. The domain checks what it reads against the same limits,
// taken from here, so a schema and the check behind it cannot disagree. Every string a caller sends has
// a maximum length and refuses what cannot be stored on both databases or makes no sense in it:
// PostgreSQL text cannot hold U+0000, so no field takes it; names, addresses and the like take no
// control character at all. A lone surrogate is refused in every string, whatever its schema, by
// src/http/input.ts.
import { type Static, type TStringOptions, Type } from 'typebox';
import { PROVIDERS, type Provider as ProviderName } from '../providers.js';
import {
  ID_MAX_LENGTH,
  IdText,
  LABEL_MAX_LENGTH,
  Label,
  MULTI_LINE,
  oneOf,
  PATH_MAX_LENGTH,
  SINGLE_LINE,
  TIMESTAMP_MAX_LENGTH,
  text,
} from './text.js';

/** A send's message (docs/api.md, "Send"). */
export const MESSAGE_MAX = 10_000;
/** RFC 5321's limit on a forward path. */
export const ADDRESS_MAX = 254;
/** Longest `scheduledAt` text: "next friday at 5:30pm" is 21 characters, a full ISO time 35. */
export const SCHEDULED_AT_MAX = 100;
export const PASSWORD_MAX = 1024;
/** At most this many sources (paths or URLs) in one request. */
export const MAX_SOURCES = 1000;
/** A location's metadata (docs/api.md, "Metadata"): at most 16 KiB of JSON, nested at most 32 levels. */
export const METADATA_MAX_BYTES = 16 * 1024;
export const METADATA_MAX_DEPTH = 32;

export const INPUT_MAX = {
  label: LABEL_MAX_LENGTH,
  path: PATH_MAX_LENGTH,
  url: 8192,
  text: MESSAGE_MAX,
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
export type LocationRef = Static<typeof LocationRef>;

/** `{id}` in a URL path. */
export const IdParam = Type.Object({ id: IdText() });
export type IdParam = Static<typeof IdParam>;

/** `?limit=&cursor=` of every list (docs/api.md, "Polling"). */
export const Paging = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^[0-9]+$', maxLength: 10 })),
    cursor: Type.Optional(text(INPUT_MAX.cursor, SINGLE_LINE, 0)()),
  },
  { additionalProperties: false },
);
export type Paging = Static<typeof Paging>;
