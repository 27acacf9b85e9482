// fast-check arbitraries for the HTTP fuzzer, derived from the request schemas in /openapi.json.
//
// A generated request is plain data (FuzzRequest), so fast-check can shrink it and print it; World.fill
// turns its placeholders into the fixtures' ids when it is sent. Bodies start valid-ish (every field
// drawn from its schema, strings that name locations, paths, URLs, addresses and dates drawn from what
// the world holds) and then take a few mutations: a field dropped, a field added, a value replaced by
// one of the wrong type or by a hostile one (huge, NUL and control characters, lone surrogates, bidi
// controls, deep nesting, many wildcards). Besides: raw bodies that are not JSON or not UTF-8, other
// content types, random path and query parameters, other keys, and random paths and methods.
//
// Patterns: the fixture bucket's object names are a few characters long, so that a pattern with many
// wildcards costs the matcher little even where it backtracks (docs/api.md, "Limits", Patterns).
import fc from 'fast-check';
import { BUCKET, LABELS } from './world.js';

export interface JsonSchema {
  type?: string;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  format?: string;
  additionalProperties?: boolean | JsonSchema;
}

export interface RouteSpec {
  method: string;
  /** The OpenAPI path, with `{id}` for path parameters. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  body: JsonSchema | undefined;
}

export type FuzzBody =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; hex: string };

export interface FuzzRequest {
  method: string;
  /** The URL with placeholders, path and query already encoded. */
  url: string;
  /** The route it was made for (or "random" for random paths). */
  route: string;
  body: FuzzBody;
  /** undefined: the default for the body (application/json when there is one); null: no header. */
  contentType: string | null | undefined;
  auth: 'key' | 'none' | 'garbage' | 'revoked' | 'basic';
}

// ---------------------------------------------------------------------------------------------------
// Hostile values

const CONTROL = ['\u0000', '\u0001', '\u0008', '\u001b', '\u001f', '\u007f', '\u0085', '\n', '\r', '\t'];
const BIDI = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069'];
const SURROGATES = ['\ud800', '\udbff', '\udc00', '\udfff'];

/** Strings a careful server must survive: control characters, lone surrogates, bidi, odd unicode. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({
    unit: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('a', 'Z', '/', '.', '*', '?', '%', ' ', '\\', ':', '"') },
      { weight: 2, arbitrary: fc.constantFrom(...CONTROL) },
      { weight: 1, arbitrary: fc.constantFrom(...SURROGATES) },
      { weight: 1, arbitrary: fc.constantFrom(...BIDI, '\u200e', '\u200f', '\u061c', '\ufeff', '\u2028') },
      { weight: 1, arbitrary: fc.constantFrom('é', 'ß', '日本', '😀', 'e\u0301', '\uffff', '\ufffd') },
    ),
    maxLength: 12,
  }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom(
    '',
    ' ',
    '   ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udfffy',
    'report\u202etxt.exe',
    '..',
    '../..',
    '%00',
    '%ff',
    '-1',
    '1e400',
    'null',
    '{}',
    'Infinity',
  ),
);

/** A string of `size` characters (up to past the 1 MiB body limit). */
export const hugeString: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(300, 5_000, 100_000, 1_100_000), fc.constantFrom('a', '*', '\u0000', 'é', '/'))
  .map(([size, unit]) => unit.repeat(size));

/** Many wildcards in a row: the backtracking case of docs/api.md, "Limits", Patterns. */
export const wildcards: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 2, max: 40 }), fc.constantFrom('*a', '*', '?*', '**/', '[a-z]*', '{a,b}*'))
  .map(([n, unit]) => `${unit.repeat(n)}*b`);

/**
 * Arrays or objects nested `depth` levels deep. Kept as this marker, written out by toJson: building
 * and stringifying thousands of levels overflows the test's own stack.
 */
export class Deep {
  constructor(
    readonly depth: number,
    readonly object: boolean,
  ) {}
  toJSON(): string {
    return this.object
      ? `${'{"a":'.repeat(this.depth)}"leaf"${'}'.repeat(this.depth)}`
      : `${'['.repeat(this.depth)}"leaf"${']'.repeat(this.depth)}`;
  }
}

export const deepValue: fc.Arbitrary<unknown> = fc
  .tuple(fc.constantFrom(40, 200, 1_000, 5_000), fc.boolean())
  .map(([depth, object]) => new Deep(depth, object));

/** JSON text of a generated value (Deep written out as raw text). */
export function toJson(value: unknown): string {
  if (value instanceof Deep) return value.toJSON();
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`)
    .join(',')}}`;
}

/** A value of some other type than the schema asks for, or a hostile one. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, 2 ** 53 + 1, [], {}, '') },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: nastyString },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: wildcards },
);

// ---------------------------------------------------------------------------------------------------
// Strings that mean something to ferry, by field name

const uuid = fc.uuid();
const locationRef = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(LABELS.a, LABELS.b, '@@locA@@', '@@locB@@') },
  { weight: 1, arbitrary: fc.constantFrom(LABELS.dup, '@@dup1@@', 'nope', '') },
  { weight: 1, arbitrary: uuid },
  { weight: 1, arbitrary: nastyString },
);
const objectPath = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      `${BUCKET}/a.txt`,
      `${BUCKET}/dir/c.md`,
      `${BUCKET}/dir/`,
      `${BUCKET}/*.txt`,
      `${BUCKET}/dir/*`,
      `${BUCKET}/?.txt`,
      `${BUCKET}/**`,
      `${BUCKET}/missing.txt`,
      `${BUCKET}/`,
      BUCKET,
      'nobucket/x',
      '',
    ),
  },
  { weight: 2, arbitrary: nastyString.map((s) => `${BUCKET}/${s}`) },
  { weight: 1, arbitrary: wildcards.map((s) => `${BUCKET}/${s}`) },
  { weight: 1, arbitrary: hugeString.map((s) => `${BUCKET}/${s}`) },
);
/** `<location>/<path>`: move, remove, share, send. */
const slashTarget = fc.tuple(locationRef, objectPath).map(([l, p]) => `${l}/${p}`);
/** `<location>:<path>`: copy. */
const colonTarget = fc.tuple(locationRef, objectPath).map(([l, p]) => `${l}:${p}`);
const pullUrl = fc.oneof(
  fc.constantFrom(
    `@@s3@@/${BUCKET}/a.txt`,
    'http://127.0.0.1:9/x',
    'http://10.0.0.1/x',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]/x',
    'http://fuzz.invalid/x',
    'ftp://127.0.0.1/x',
    'file:///etc/passwd',
    'http://user:pass@127.0.0.1/x',
    'not a url',
  ),
  fc.webUrl().map((u) => u.replace(/^https?:\/\/[^/]+/, 'http://127.0.0.1:9')),
  nastyString.map((s) => `http://127.0.0.1:9/${s}`),
);
const address = fc.oneof(
  fc.constantFrom(
    'ann@example.com',
    'Bob <bob@example.com>',
    'a\u0000@example.com',
    'a@example.com\r\nBcc: evil@example.com',
    'not an address',
    '@example.com',
    'ann@',
  ),
  fc.emailAddress(),
  nastyString.map((s) => `${s}@example.com`),
);
const addresses = fc.oneof(address, fc.array(address, { minLength: 0, maxLength: 55 }));
const when = fc.oneof(
  fc.integer({ min: -3600, max: 400 * 86400 }).map((s) => new Date(Date.now() + s * 1000).toISOString()),
  fc.constantFrom(
    'in 2 hours',
    'tomorrow at 9am',
    'next friday 17:00',
    'tomorrow 9am PST',
    'in 366 days',
    '+275760-09-13T00:00:00Z',
    '-271821-04-20T00:00:00Z',
    '2020-01-01T00:00:00Z',
    '2026-02-30T00:00:00Z',
    'yesterday',
    'never',
  ),
  nastyString,
);
const zone = fc.constantFrom('UTC', 'Europe/Paris', 'America/New_York', 'Mars/Olympus', 'EST', '+02:00');
const events = fc.array(
  fc.constantFrom('transfer.complete', 'job.failed', 'send.sent', 'share.downloaded', 'nope', ''),
  { minLength: 0, maxLength: 12 },
);
const webhookUrl = fc.oneof(
  fc.constantFrom(
    'http://127.0.0.1:9/hook',
    'https://example.com/hook',
    'http://10.0.0.1/hook',
    'http://169.254.169.254/',
    'ftp://example.com/',
    'file:///etc/passwd',
  ),
  fc.webUrl(),
  nastyString,
);
const providers = ['s3', 'r2', 'wasabi', 'b2', 'gcs', 'azureblob', 'dropbox', 'drive', 'onedrive', 'box'];
const secret = fc.oneof(
  fc.record({ access_key_id: fc.string(), secret_access_key: fc.string() }),
  fc.record({ access_token: fc.string(), refresh_token: fc.string(), expiry: when }),
  fc.record({
    service_account_json: fc.oneof(
      fc.string(),
      fc.record({ type: fc.constant('service_account'), private_key: fc.string(), token_uri: pullUrl }),
    ),
  }),
  fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
);
const metadata = fc.oneof(
  fc.record({ endpoint: fc.constantFrom('@@s3@@', 'http://127.0.0.1:9', 'http://10.0.0.1', 'nope') }),
  fc.record({ region: fc.oneof(fc.constantFrom('us-east-1', ''), nastyString) }, { requiredKeys: [] }),
  fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
  deepValue.map((value) => ({ deep: value })),
);
/** Labels of locations the fuzzer makes: never a fixture's, so a store call never goes to a made-up one. */
const newLabel = fc.oneof(
  fc.string({ minLength: 1, maxLength: 20 }).map((s) => `made ${s}`),
  nastyString,
);

/** What to put in a field of this name (at this route), or undefined to go by its schema. */
function vocabulary(route: RouteSpec, field: string): fc.Arbitrary<unknown> | undefined {
  const at = `${route.method} ${route.path}`;
  switch (field) {
    case 'name':
      return at.includes('tokens') ? undefined : locationRef;
    case 'id':
      return fc.oneof({ weight: 3, arbitrary: fc.constantFrom('@@locA@@', '@@dup1@@') }, uuid, nastyString);
    case 'label':
      return newLabel;
    case 'path':
      if (at.includes('/v1/list') || at.includes('/v1/copy')) return objectPath;
      return fc.oneof(slashTarget, fc.array(slashTarget, { maxLength: 3 }));
    case 'from':
      if (at.includes('/pull')) return fc.oneof(pullUrl, fc.array(pullUrl, { maxLength: 3 }));
      if (at.includes('/move')) return fc.oneof(slashTarget, fc.array(slashTarget, { maxLength: 3 }));
      return colonTarget;
    case 'to':
      if (at.includes('/send')) return addresses;
      return at.includes('/copy') ? colonTarget : slashTarget;
    case 'file':
    case 'source':
      return slashTarget;
    case 'cc':
    case 'bcc':
    case 'replyTo':
      return addresses;
    case 'scheduledAt':
    case 'expires_at':
      return when;
    case 'timezone':
      return zone;
    case 'events':
      return events;
    case 'url':
      return webhookUrl;
    case 'provider':
      return fc.constantFrom(...providers);
    case 'secret':
      return secret;
    case 'metadata':
      return metadata;
    case 'manifest':
      return fc.array(fc.oneof(fc.constantFrom('a.txt', 'dir/c.md', ''), nastyString), { maxLength: 4 });
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------
// Schemas to values

/** A value that meets `schema` (or nearly: vocabulary strings need not), for the field `field`. */
function fromSchema(route: RouteSpec, schema: JsonSchema, field: string | undefined): fc.Arbitrary<unknown> {
  const known = field === undefined ? undefined : vocabulary(route, field);
  if (known) return known;
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => fromSchema(route, s, field)));
  switch (schema.type) {
    case 'string':
      if (schema.format === 'date-time') return when;
      return fc.string({
        minLength: schema.minLength ?? 0,
        maxLength: Math.max(schema.minLength ?? 0, Math.min(schema.maxLength ?? 24, 24)),
      });
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1_000_000 });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(fromSchema(route, schema.items ?? {}, field), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 4, 4)),
      });
    case 'object': {
      const properties = schema.properties ?? {};
      const arbitraries: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, sub] of Object.entries(properties)) arbitraries[key] = fromSchema(route, sub, key);
      return fc.record(arbitraries, { requiredKeys: (schema.required ?? []).filter((k) => k in properties) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

type Mutation =
  | { op: 'drop'; pick: number }
  | { op: 'add'; pick: number; key: string; value: unknown }
  | { op: 'replace'; pick: number; value: unknown };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('drop' as const), pick: fc.nat() }),
  fc.record({
    op: fc.constant('add' as const),
    pick: fc.nat(),
    key: fc.oneof(fc.constantFrom('extra', '__proto__', 'constructor', ''), nastyString),
    value: wrongValue,
  }),
  fc.record({ op: fc.constant('replace' as const), pick: fc.nat(), value: wrongValue }),
);

/** Every object in `value` (itself included), for mutations to pick from. */
function objectsIn(value: unknown, out: Array<Record<string, unknown>> = [], depth = 0) {
  if (depth > 8 || value === null || typeof value !== 'object' || value instanceof Deep) return out;
  if (!Array.isArray(value)) out.push(value as Record<string, unknown>);
  for (const child of Object.values(value as object)) objectsIn(child, out, depth + 1);
  return out;
}

/** A copy of `value` down to the depth mutations reach (deeper parts, such as deep values, are shared). */
function cloneTop(value: unknown, depth = 0): unknown {
  if (depth > 9 || value === null || typeof value !== 'object' || value instanceof Deep) return value;
  if (Array.isArray(value)) return value.map((v) => cloneTop(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    Object.defineProperty(out, k, {
      value: cloneTop(v, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** A copy of `body` with `char` put in the middle of one of its strings (the `pick`th, cycling). */
function poisonLeaf(body: unknown, pick: number, char: string): unknown {
  const copy = structuredClone(body) as unknown;
  const leaves: Array<{ holder: Record<string, unknown> | unknown[]; key: string | number }> = [];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => {
        if (typeof item === 'string') leaves.push({ holder: node, key: i });
        else visit(item);
      });
    } else if (node !== null && typeof node === 'object') {
      for (const [key, item] of Object.entries(node)) {
        if (typeof item === 'string') leaves.push({ holder: node as Record<string, unknown>, key });
        else visit(item);
      }
    }
  };
  visit(copy);
  const leaf = leaves[pick % Math.max(1, leaves.length)];
  if (!leaf) return copy;
  const text = (leaf.holder as Record<string | number, string>)[leaf.key] ?? '';
  const half = Math.floor(text.length / 2);
  (leaf.holder as Record<string | number, string>)[leaf.key] =
    `${text.slice(0, half)}${char}${text.slice(half)}`;
  return copy;
}

function mutate(body: unknown, mutations: Mutation[]): unknown {
  const copy = cloneTop(body);
  for (const m of mutations) {
    const objects = objectsIn(copy);
    const target = objects[m.pick % Math.max(1, objects.length)];
    if (!target) continue;
    const keys = Object.keys(target);
    const key = keys[m.pick % Math.max(1, keys.length)];
    if (m.op === 'drop' && key !== undefined) delete target[key];
    else if (m.op === 'replace' && key !== undefined) target[key] = m.value;
    else if (m.op === 'add') {
      Object.defineProperty(target, m.key, {
        value: m.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return copy;
}

// ---------------------------------------------------------------------------------------------------
// Requests

const bodyText = fc.oneof(
  fc.constantFrom(
    '',
    '{',
    '{"a":',
    'null',
    '[]',
    '"x"',
    '1',
    'true',
    '{"a":1}{"b":2}',
    '\ufeff{}',
    '{"a":1,}',
  ),
  fc.string({ maxLength: 40 }),
  fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null'),
  fc.integer({ min: 1, max: 6_000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
  fc.integer({ min: 1, max: 6_000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
  fc.constant('{"name":"fz-a","name":"fz-b"}'),
);
const bodyBytes = fc
  .uint8Array({ minLength: 1, maxLength: 32 })
  .map((bytes) => Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, ...bytes, 0x22, 0x7d]).toString('hex'));

const contentType: fc.Arbitrary<string | null | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant(undefined) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      null,
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'APPLICATION/JSON',
      'application/jsonx',
      'application/merge-patch+json',
      'application/octet-stream',
      '',
      ';;;',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

const auth: fc.Arbitrary<FuzzRequest['auth']> = fc.oneof(
  { weight: 20, arbitrary: fc.constant('key' as const) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('none' as const, 'garbage' as const, 'revoked' as const, 'basic' as const),
  },
);

function encodePart(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    // A lone surrogate has no UTF-8: send the bytes a careless client would (CESU-8).
    return '%ED%A0%80';
  }
}

/** Path segments around the router's parameter length limit (100). */
const longSegment = fc
  .tuple(fc.constantFrom(99, 100, 101, 300, 5_000), fc.constantFrom('a', ' ', 'é', '0'))
  .map(([n, unit]) => unit.repeat(n));

/** A path parameter: a fixture's id, a UUID, or anything (sent encoded, or raw as a client might). */
function pathParam(route: RouteSpec): fc.Arbitrary<string> {
  const fixture = route.path.startsWith('/v1/tokens')
    ? '@@victimKey@@'
    : route.path.startsWith('/v1/transfers')
      ? '@@transfer@@'
      : route.path.startsWith('/v1/jobs')
        ? '@@job@@'
        : route.path.startsWith('/v1/shares')
          ? '@@share@@'
          : route.path.startsWith('/v1/sends')
            ? '@@send@@'
            : '@@webhook@@';
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(fixture) },
    { weight: 2, arbitrary: uuid },
    { weight: 2, arbitrary: fc.oneof(nastyString, longSegment).map(encodePart) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('%ff', '%', 'a%', '%2F', '..', '%2e%2e', '%00', '%ED%A0%80', '+', ' '),
    },
  );
}

const queryValue = fc.oneof(
  fc.constantFrom('1', '0', '-1', '50', '100', '101', '1e3', '1.5', 'abc', '', '99999999999999999999'),
  fc.string({ maxLength: 20 }).map(encodePart),
  fc.constantFrom('%ff', '%', '%00', `${'A'.repeat(5000)}`),
);

function query(route: RouteSpec): fc.Arbitrary<string> {
  const names = [...route.queryParams, 'unknown'];
  return fc
    .array(fc.tuple(fc.constantFrom(...names), queryValue), { maxLength: 4 })
    .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`));
}

/** Requests for one route of /openapi.json. */
export function requestsFor(route: RouteSpec): fc.Arbitrary<FuzzRequest> {
  const params = fc.tuple(...route.pathParams.map(() => pathParam(route)));
  const url = fc.tuple(params, query(route)).map(([values, q]) => {
    let path = route.path;
    route.pathParams.forEach((name, i) => {
      path = path.replace(`{${name}}`, values[i] as string);
    });
    return `${path}${q}`;
  });
  const valid = route.body ? fromSchema(route, route.body, undefined) : fc.constant(undefined);
  const body: fc.Arbitrary<FuzzBody> = route.body
    ? fc.oneof(
        { weight: 3, arbitrary: valid.map((value) => ({ kind: 'json' as const, value })) },
        {
          weight: 6,
          arbitrary: fc
            .tuple(valid, fc.array(mutation, { minLength: 1, maxLength: 3 }))
            .map(([value, ms]) => ({ kind: 'json' as const, value: mutate(value, ms) })),
        },
        {
          // One character that a database or a store cannot take, inside one string of a valid body:
          // the body passes every other check, so the character is what decides the answer.
          weight: 4,
          arbitrary: fc
            .tuple(
              valid,
              fc.nat(),
              fc.constantFrom('\u0000', '\u0001', '\u001b', '\ud800', '\u202e', '\u0085'),
            )
            .map(([value, pick, char]) => ({ kind: 'json' as const, value: poisonLeaf(value, pick, char) })),
        },
        { weight: 1, arbitrary: wrongValue.map((value) => ({ kind: 'json' as const, value })) },
        { weight: 1, arbitrary: bodyText.map((text) => ({ kind: 'text' as const, text })) },
        { weight: 1, arbitrary: bodyBytes.map((hex) => ({ kind: 'bytes' as const, hex })) },
        { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
      )
    : fc.oneof(
        { weight: 8, arbitrary: fc.constant({ kind: 'none' as const }) },
        {
          weight: 1,
          arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => ({ kind: 'json' as const, value })),
        },
        { weight: 1, arbitrary: bodyText.map((text) => ({ kind: 'text' as const, text })) },
      );
  return fc.record({
    method: fc.constant(route.method),
    url,
    route: fc.constant(`${route.method} ${route.path}`),
    body,
    contentType,
    auth,
  });
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** Any method on paths near the real ones: unknown paths, wrong methods, bad encodings, long segments. */
export function randomRequests(routes: RouteSpec[]): fc.Arbitrary<FuzzRequest> {
  const segment = fc.oneof(
    fc.constantFrom(
      'v1',
      'locations',
      'jobs',
      's',
      'files',
      'openapi.json',
      '%ff',
      '%',
      '..',
      '',
      'a'.repeat(120),
    ),
    fc.string({ maxLength: 10 }).map(encodePart),
  );
  const path = fc.oneof(
    fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => `/${parts.join('/')}`),
    fc
      .tuple(fc.constantFrom(...routes.map((r) => r.path)), segment)
      .map(([p, s]) => p.replace(/\{\w+\}/g, s)),
    fc.constantFrom(
      '/v1/jobs/%ff',
      '/v1/jobs/%',
      '/s/%ff',
      '/s/',
      '/%',
      '//',
      '/v1/tokens/',
      '/v1//locations',
    ),
  );
  return fc.record({
    method: fc.constantFrom(...METHODS),
    url: path,
    route: fc.constant('random'),
    body: fc.oneof(
      fc.constant({ kind: 'none' as const }),
      bodyText.map((text) => ({ kind: 'text' as const, text })),
    ),
    contentType,
    auth,
  });
}

/** The routes of an OpenAPI document, with their request schemas. */
export function routesOf(openapi: {
  paths: Record<
    string,
    Record<string, { parameters?: Array<{ in: string; name: string }>; requestBody?: unknown }>
  >;
}): RouteSpec[] {
  const routes: RouteSpec[] = [];
  for (const [path, operations] of Object.entries(openapi.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const parameters = op.parameters ?? [];
      const body = (op.requestBody as { content?: Record<string, { schema?: JsonSchema }> } | undefined)
        ?.content?.['application/json']?.schema;
      routes.push({
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: parameters.filter((p) => p.in === 'query').map((p) => p.name),
        body,
      });
    }
  }
  return routes;
}
