// The recorded shapes of the providers' answers (test/fakes/<provider>/fixtures/*.json, each naming its
// reference page in "$source"), and the two ways the fakes and their tests use them:
// - fill(): a fake builds an answer by copying a fixture's body and replacing values; a key the fixture
//   does not have is refused, so the field names of every answer come from the fixture, not from here.
// - shapeMismatches(): a fake's answer is compared with the fixture, key by key and type by type,
//   recursively, so that a fake which drifts from the recorded shape fails its provider's shape test.
// Fixture files: {"$source", "$optional"?: key names an answer may leave out, "status", "headers"?, "body"}.
import { readFileSync } from 'node:fs';

export type FixtureProvider = 'dropbox' | 'drive' | 'onedrive' | 'box' | 'gcs';

export interface Fixture {
  /** The reference page the shape was taken from. */
  source: string;
  /** Keys (at any depth) that an answer may leave out: the reference marks them optional. */
  optional: ReadonlySet<string>;
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

const cache = new Map<string, Fixture>();

/** A fixture, parsed once; callers get their own copy of the body through fill() or structuredClone. */
export function fixture(provider: FixtureProvider, name: string): Fixture {
  const key = `${provider}/${name}`;
  let found = cache.get(key);
  if (!found) {
    const url = new URL(`./${provider}/fixtures/${name}.json`, import.meta.url);
    const raw = JSON.parse(readFileSync(url, 'utf8')) as Record<string, unknown>;
    if (typeof raw.$source !== 'string' || typeof raw.status !== 'number' || !('body' in raw)) {
      throw new Error(`fixture ${key}: needs "$source", "status" and "body"`);
    }
    found = {
      source: raw.$source,
      optional: new Set(Array.isArray(raw.$optional) ? (raw.$optional as string[]) : []),
      status: raw.status,
      headers: (raw.headers ?? {}) as Record<string, string>,
      body: raw.body,
    };
    cache.set(key, found);
  }
  return found;
}

/** A fixture's body as a record (for the answers whose body is a JSON object). */
export function fixtureBody(provider: FixtureProvider, name: string): Record<string, unknown> {
  const body = fixture(provider, name).body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new Error(`fixture ${provider}/${name}: the body is not an object`);
  }
  return body as Record<string, unknown>;
}

/**
 * A copy of `template` with `values` put in. Every key of `values` must be a key of the template (a
 * fake cannot add a field the recorded shape lacks); a value of undefined removes the key (for
 * fields the reference leaves out, as a last page's cursor). Keys not given keep the fixture's value.
 */
export function fill(
  template: Record<string, unknown>,
  values: Record<string, unknown>,
): Record<string, unknown> {
  const out = structuredClone(template);
  for (const [key, value] of Object.entries(values)) {
    if (!(key in template)) throw new Error(`the recorded shape has no field "${key}"`);
    if (value === undefined) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** A nested object of a template (e.g. Google's `error`), for filling in its own turn. */
export function part(template: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = template[key];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`the recorded shape has no object "${key}"`);
  }
  return value as Record<string, unknown>;
}

/** The first element of a template's array (e.g. Google's `errors[0]`). */
export function firstOf(template: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = template[key];
  const first: unknown = Array.isArray(value) ? value[0] : undefined;
  if (typeof first !== 'object' || first === null)
    throw new Error(`the recorded shape has no array "${key}"`);
  return first as Record<string, unknown>;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/**
 * How `actual` differs from the recorded shape `expected`: same keys (but the fixture's optional
 * ones may be missing) and the same JSON types, recursively. An array's every element must match one
 * of the fixture's elements (a listing holds files and folders); an empty fixture array takes any.
 * null matches any type either way: the references document nullable fields (Box's next_marker).
 * Returns the differences, each with its path; none when the shapes agree.
 */
export function shapeMismatches(actual: unknown, recorded: Fixture | unknown, path = '$'): string[] {
  const isFixture = typeof recorded === 'object' && recorded !== null && 'optional' in recorded;
  const expected = isFixture ? (recorded as Fixture).body : recorded;
  const optional = isFixture ? (recorded as Fixture).optional : new Set<string>();
  return compare(actual, expected, optional, path);
}

function compare(actual: unknown, expected: unknown, optional: ReadonlySet<string>, path: string): string[] {
  const a = kindOf(actual);
  const e = kindOf(expected);
  if (a === 'null' || e === 'null') return [];
  if (a !== e) return [`${path}: ${a} where the fixture has ${e}`];
  if (a === 'array') {
    const candidates = expected as unknown[];
    if (candidates.length === 0) return [];
    const out: string[] = [];
    (actual as unknown[]).forEach((item, i) => {
      const tries = candidates.map((candidate) => compare(item, candidate, optional, `${path}[${i}]`));
      if (!tries.some((t) => t.length === 0))
        out.push(...(tries.sort((x, y) => x.length - y.length)[0] ?? []));
    });
    return out;
  }
  if (a !== 'object') return [];
  const act = actual as Record<string, unknown>;
  const exp = expected as Record<string, unknown>;
  const out: string[] = [];
  for (const key of Object.keys(act)) {
    if (!(key in exp)) out.push(`${path}.${key}: not in the fixture`);
    else out.push(...compare(act[key], exp[key], optional, `${path}.${key}`));
  }
  for (const key of Object.keys(exp)) {
    if (!(key in act) && !optional.has(key)) out.push(`${path}.${key}: missing (the fixture has it)`);
  }
  return out;
}
