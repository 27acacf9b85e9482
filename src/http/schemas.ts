// The error answers every route may give (docs/api.md, "Errors"), as /openapi.json names them, and what a
// failed pattern says. Their shapes, like those of requests and of the other answers, are in src/api/,
// one file per area, from which the routes take them.
import { type TSchema, Type } from 'typebox';
import { AmbiguousName, type ErrorBody } from '../api/errors.js';
import { MULTI_LINE, NO_NUL, SINGLE_LINE } from '../api/text.js';

const ref = (id: string) => Type.Unsafe<ErrorBody>({ $ref: `${id}#` });

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

/** What a failed `pattern` says (src/http/errors.ts), by pattern. */
export const PATTERN_RULES: Readonly<Record<string, string>> = {
  [SINGLE_LINE]: 'must not contain control characters (U+0000 to U+001F, U+007F)',
  [MULTI_LINE]: 'must not contain control characters other than tab and line breaks',
  [NO_NUL]: 'must not contain U+0000 (NUL)',
  '^[0-9]+$': 'must be a whole number',
};
