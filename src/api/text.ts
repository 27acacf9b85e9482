// The strings of the wire (docs/api.md, "Input"): their limits and the characters each refuses, shared by
// the request schemas (src/http/schemas.ts) and the response shapes of this folder. Every string has a
// maximum length, and refuses what cannot be stored on both databases or makes no sense in it.
import { type TStringOptions, Type } from 'typebox';

/** A location label or key name (docs/api.md, "Input"). */
export const LABEL_MAX_LENGTH = 256;
/** `<location>/<bucket>/<key>`: keys are at most 1,024 bytes on S3 and Azure, the rest rides on top. */
export const PATH_MAX_LENGTH = 4096;
/** A UUID is 36 characters; Fastify refuses path parameters over 100 before any route runs. */
export const ID_MAX_LENGTH = 100;
export const TIMESTAMP_MAX_LENGTH = 64;

/** No control character (U+0000 to U+001F, U+007F): names, labels, URLs, times, zones. */
export const SINGLE_LINE = '^[^\\u0000-\\u001f\\u007f]*$';
/** Tab and line breaks allowed, no other control character: messages. */
export const MULTI_LINE = '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$';
/** Every character a store may hold in a name, except U+0000, which PostgreSQL text cannot: paths. */
export const NO_NUL = '^[^\\u0000]*$';

export const text =
  (maxLength: number, pattern: string, minLength: number) =>
  (options: TStringOptions = {}) =>
    Type.String({ minLength, maxLength, pattern, ...options });

/** A location label, key name or other short name. */
export const Label = text(LABEL_MAX_LENGTH, SINGLE_LINE, 1);
/** `<location>/<path>`, a pattern, a copy target or a manifest key. */
export const Path = text(PATH_MAX_LENGTH, NO_NUL, 1);
/** An id in a body or a path; the domain answers 400 or 404 for one that is not a UUID. */
export const IdText = text(ID_MAX_LENGTH, SINGLE_LINE, 0);

/** An RFC 3339 time. */
export const TimestampText = (options: TStringOptions = {}) =>
  Type.String({ format: 'date-time', maxLength: TIMESTAMP_MAX_LENGTH, ...options });
export const Timestamp = TimestampText({ description: 'RFC 3339' });

/** A string from a closed list (src/states.ts, src/providers.ts): an enum in /openapi.json. */
export function oneOf<const T extends string>(values: readonly T[], description?: string) {
  return Type.Unsafe<T>({
    type: 'string',
    enum: [...values],
    maxLength: Math.max(...values.map((v) => v.length)),
    ...(description ? { description } : {}),
  });
}
