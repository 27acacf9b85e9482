// Durable JSON: what ferry keeps as JSON text in a column and reads back, perhaps in a later version
// than the one that wrote it (a job queued before an upgrade). Each column has one codec, built from a
// TypeBox schema, whose encode is the only writer of the text and whose decode the only reader: decode
// checks the shape and refuses, with one short error naming the table, column and row, what this
// version cannot read. A field added after a column's first release is optional in its schema, so rows
// written before it read as they are; a change that is not additive gives the codec an earlier shape
// and how it reads as the current one (`earlier`).
import type { Static, TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';

/**
 * A column's JSON that this version cannot read: not JSON, or not of the column's shape. The message
 * names where (table, column, row) and the first place in the value that is wrong, never the value
 * (a path or a secret could be in it). Not a FerryError: to the worker it is a crash of that one piece
 * of work (docs/api.md, "Background work that keeps failing"), to the API an internal error.
 */
export class DurableJsonError extends Error {
  readonly table: string;
  readonly column: string;
  readonly row: string;

  constructor(table: string, column: string, row: string, reason: string, cause?: unknown) {
    super(
      `${table}.${column} of row ${row} is not JSON this version of ferry reads: ${reason}`,
      cause === undefined ? undefined : { cause },
    );
    this.name = 'DurableJsonError';
    this.table = table;
    this.column = column;
    this.row = row;
  }
}

/** One column's JSON. `row`: the row's id (for a row keyed by two columns, both, joined by "/"). */
export interface Codec<T> {
  readonly table: string;
  readonly column: string;
  encode(value: T): string;
  decode(text: string, row: string): T;
}

/** An earlier shape of a column and how a value of it reads as the current one. */
export interface Earlier<T> {
  schema: TSchema;
  upgrade(value: unknown): T;
}

/**
 * Where a value departs from its schema, without the value: "/paths/0/path: must be string". Of a
 * union's branches, the error deepest in the value is the one that says most (a remove whose path is
 * not a string, rather than a copy that lacks its source).
 */
function firstError(validator: Validator, value: unknown): string {
  let deepest: { instancePath: string; message: string } | undefined;
  let depth = -1;
  for (const error of validator.Errors(value)) {
    const d = error.instancePath.split('/').length;
    if (d > depth) [deepest, depth] = [error, d];
  }
  if (deepest === undefined) return 'not of its shape';
  return `${deepest.instancePath === '' ? '/' : deepest.instancePath}: ${deepest.message}`;
}

/**
 * The codec of `table`.`column`, whose values are `schema`. The schema is compiled on first use, so
 * loading the module costs nothing for a process that never reads the column.
 */
export function codec<S extends TSchema>(
  table: string,
  column: string,
  schema: S,
  earlier: Earlier<Static<S>>[] = [],
): Codec<Static<S>> {
  let validators: { current: Validator; earlier: Validator[] } | undefined;
  const compiled = () => {
    validators ??= { current: Compile(schema), earlier: earlier.map((e) => Compile(e.schema)) };
    return validators;
  };
  return {
    table,
    column,
    encode: (value) => JSON.stringify(value),
    decode(text, row) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        // Not the SyntaxError as cause: V8's message quotes the text, and a column may hold an opened
        // secret (locations.secret_envelope), which must never reach a log line through a cause.
        throw new DurableJsonError(table, column, row, 'not JSON');
      }
      const { current, earlier: older } = compiled();
      if (current.Check(value)) return value as Static<S>;
      for (const [i, validator] of older.entries()) {
        if (validator.Check(value)) return (earlier[i] as Earlier<Static<S>>).upgrade(value);
      }
      throw new DurableJsonError(table, column, row, firstError(current, value));
    },
  };
}
