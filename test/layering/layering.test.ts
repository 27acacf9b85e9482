// The layering of src/ (.dependency-cruiser.mjs, README "Layout"): every folder imports only from its
// own layer and those below it, with no exception, and no file imports itself through others. And every wire shape is declared once, in src/api/:
// a route file names the shapes it takes and answers, and declares none. And every lease is written in
// src/queue: no other file writes a lease column. And the console names no provider's field: each store
// declares its own, and the console reads them from GET /v1/providers. And the console and the CLI call
// the API through its route map (src/api/routes.ts) and declare none of its types again.
import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  cruise,
  type ICruiseOptions,
  type ICruiseResult,
  type IForbiddenRuleType,
  type IViolation,
} from 'dependency-cruiser';
import { LEASED } from '../../src/queue/leased.js';
import type { ProviderDeclaration } from '../../src/stores/declaration.js';
import { DECLARATIONS } from '../../src/stores/declarations.js';
import { ROOT } from '../support/root.js';

// The checkout's src/, not the compiled tree the runner may run this file from.
const root = ROOT;
const { default: rules } = (await import(pathToFileURL(join(root, '.dependency-cruiser.mjs')).href)) as {
  default: { forbidden: IForbiddenRuleType[]; options: ICruiseOptions };
};

async function violations(baseDir: string, paths: string[]) {
  const previous = process.cwd();
  process.chdir(baseDir);
  try {
    const reported = await cruise(paths, {
      validate: true,
      ruleSet: { forbidden: rules.forbidden },
      ...rules.options,
      baseDir,
    });
    const result = reported.output as ICruiseResult;
    return result.summary.violations.filter((v) => v.rule.severity !== 'ignore');
  } finally {
    process.chdir(previous);
  }
}

/** A violation as `rule: from → to`; a circle's, as the whole circle from the file it was found at. */
const line = (v: IViolation) =>
  `${v.rule.name}: ${[v.from, ...(v.cycle?.map((step) => step.name) ?? [v.to])].join(' → ')}`;

test('src/ and ui/src import only downward, and no file imports itself through others', async () => {
  const found = await violations(root, ['src', 'ui/src']);
  assert.deepEqual(found.map(line), [], 'imports against the layering (.dependency-cruiser.mjs)');
});

test('the rules catch an import upward: a store that imports domain/, a kernel file that imports a store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-layering-'));
  try {
    for (const [file, text] of Object.entries({
      'src/domain/thing.ts': 'export const thing = 1;\n',
      'src/stores/probe.ts': "import { thing } from '../domain/thing.js';\nexport const probe = thing;\n",
      'src/errors.ts': "import { probe } from './stores/probe.js';\nexport const error = probe;\n",
    })) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    writeFileSync(join(dir, 'tsconfig.json'), readFileSync(join(root, 'tsconfig.json')));
    const found = (await violations(dir, ['src'])).map(line).sort();
    assert.deepEqual(found, [
      'kernel-imports-kernel: src/errors.ts → src/stores/probe.ts',
      'storage-below-parts: src/stores/probe.ts → src/domain/thing.ts',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the rules catch a circle of imports: two files that import each other, and four in a ring through a type', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-layering-'));
  try {
    for (const [file, text] of Object.entries({
      // planner ↔ sync-plan as they were: the planner runs the sync's plan, which named the planner's type.
      'src/engine/planner.ts':
        "import { syncObjects } from './sync-plan.js';\nexport type OpenStore = () => void;\nexport const plan = syncObjects;\n",
      'src/engine/sync-plan.ts':
        "import type { OpenStore } from './planner.js';\nexport const syncObjects = (open: OpenStore) => open;\n",
      'src/domain/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'src/domain/b.ts': "import { c } from './c.js';\nexport const b = c;\n",
      'src/domain/c.ts': "import type { A } from './d.js';\nexport const c: A = 1;\n",
      'src/domain/d.ts': "import { a } from './a.js';\nexport type A = number;\nexport const d = a;\n",
      // An import one way only is no circle.
      'src/domain/e.ts': "import { a } from './a.js';\nexport const e = a;\n",
    })) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    writeFileSync(join(dir, 'tsconfig.json'), readFileSync(join(root, 'tsconfig.json')));
    const found = (await violations(dir, ['src'])).map(line).sort();
    // Each circle once, from the first of its files the cruise reaches; e.ts, outside it, is not named.
    assert.deepEqual(found, [
      'no-circle: src/domain/a.ts → src/domain/b.ts → src/domain/c.ts → src/domain/d.ts → src/domain/a.ts',
      'no-circle: src/engine/planner.ts → src/engine/sync-plan.ts → src/engine/planner.ts',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the rules catch a store SDK loaded at start: a value import of one, and a static import of gcs/auth.ts', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-layering-'));
  try {
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    for (const [file, text] of Object.entries({
      'src/stores/s3/probe.ts':
        "import { S3Client } from '@aws-sdk/client-s3';\nexport const probe = S3Client;\n",
      'src/stores/azureblob/probe.ts':
        "import type { BlobServiceClient } from '@azure/storage-blob';\nexport type Probe = BlobServiceClient;\n",
      'src/stores/gcs/auth.ts': 'export const auth = 1;\n',
      'src/stores/gcs/probe.ts':
        "import { auth } from './auth.js';\nexport const probe = auth;\nexport const later = () => import('./auth.js');\n",
    })) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    writeFileSync(join(dir, 'tsconfig.json'), readFileSync(join(root, 'tsconfig.json')));
    // (node_modules is a link to this checkout's: the path is reported through it.)
    const found = (await violations(dir, ['src']))
      .map((v) => line(v).replace(/→ .*node_modules\//, '→ node_modules/'))
      .sort();
    assert.deepEqual(found, [
      'gcs-auth-on-first-use: src/stores/gcs/probe.ts → src/stores/gcs/auth.ts',
      'sdks-on-first-use: src/stores/s3/probe.ts → node_modules/@aws-sdk/client-s3/dist-cjs/index.js',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Durable JSON (src/durable/codec.ts): what ferry keeps as JSON in a column is read through that column's
// codec, which checks its shape and names the row it refuses, never by a bare JSON.parse in the
// features. The one parse allowed there reads no column: a caller's service-account key file, given as
// a string in a request and refused with the request's own 422.
const PARSE_ALLOWED = new Set(['src/domain/locations/secret-shape.ts']);

/** Each `JSON.parse(` in src/engine, src/domain, src/api and src/queue outside PARSE_ALLOWED, as file:line. */
function bareParses(base: string): string[] {
  const found: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts')) {
        const file = relative(base, path).split('\\').join('/');
        if (PARSE_ALLOWED.has(file)) continue;
        for (const [i, text] of readFileSync(path, 'utf8').split('\n').entries()) {
          const code = text.trimStart();
          if (code.startsWith('//') || code.startsWith('*')) continue;
          if (/\bJSON\.parse\s*\(/.test(code)) found.push(`${file}:${i + 1}`);
        }
      }
    }
  };
  for (const folder of ['src/engine', 'src/domain', 'src/api', 'src/queue']) visit(join(base, folder));
  return found.sort();
}

test('src/engine, src/domain, src/api and src/queue read durable JSON through its codec, never a bare JSON.parse', () => {
  assert.deepEqual(
    bareParses(root),
    [],
    'JSON.parse outside src/durable (read the column through its codec)',
  );
});

test('the rule catches a bare JSON.parse in engine/, domain/, api/ and queue/, not in src/durable or a comment', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-layering-'));
  try {
    for (const [file, text] of Object.entries({
      'src/engine/probe.ts': 'export const spec = (t: string) => JSON.parse(t) as { kind: string };\n',
      'src/domain/deep/probe.ts':
        '// JSON.parse in a comment is words\nexport const x = (t: string) =>\n  JSON.parse (t);\n',
      'src/domain/locations/secret-shape.ts': 'export const key = (t: string) => JSON.parse(t);\n',
      'src/durable/codec.ts': 'export const decode = (t: string) => JSON.parse(t);\n',
      'src/api/probe.ts': 'export const from = (t: string) => JSON.parse(t) as string;\n',
      'src/queue/probe.ts': 'export const owners = (t: string) => JSON.parse(t) as string[];\n',
    })) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    assert.deepEqual(bareParses(dir), [
      'src/api/probe.ts:1',
      'src/domain/deep/probe.ts:3',
      'src/engine/probe.ts:1',
      'src/queue/probe.ts:1',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * What declares a wire shape in a file: a TypeBox constructor (Type.Object, Type.Union, Type.Array…), a
 * value imported from TypeBox (types alone are fine: `import type`, or `{ type Static }`), or a JSON
 * Schema object written by hand.
 */
function shapesIn(file: string, text: string): string[] {
  const found: string[] = [];
  const at = (index: number, what: string) =>
    found.push(`${file}:${text.slice(0, index).split('\n').length}: ${what}`);
  for (const m of text.matchAll(/\bType\s*\.\s*([A-Z]\w*)\s*\(/g)) at(m.index, `Type.${m[1]}(`);
  for (const m of text.matchAll(
    /^import\s+(?!type\s)([^;]*?)\s+from\s+['"](typebox|@sinclair\/typebox)['"]/gm,
  )) {
    const names = (m[1] ?? '')
      .replace(/^\{|\}$/g, '')
      .split(',')
      .map((name) => name.trim());
    if (names.some((name) => name !== '' && !name.startsWith('type ')))
      at(m.index, `a value import of ${m[2]}`);
  }
  for (const m of text.matchAll(/\btype\s*:\s*['"]object['"]/g)) at(m.index, 'a JSON Schema object');
  return found;
}

/** Every shape declared in the .ts files under `dir`, as `path:line: what`. */
function shapesDeclared(base: string, dir: string): string[] {
  return readdirSync(join(base, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .sort()
    .flatMap((name) => {
      const path = join(base, dir, name);
      return shapesIn(relative(base, path), readFileSync(path, 'utf8'));
    });
}

test('no file under src/http/routes declares a wire shape: each is declared once, in src/api/', () => {
  assert.deepEqual(shapesDeclared(root, 'src/http/routes'), [], 'move the shape to its area in src/api/');
});

test('the shape rule catches a route that declares one: Type.Object, a Type.Union of objects, a TypeBox value import, a hand-written schema', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-layering-'));
  try {
    for (const [file, text] of Object.entries({
      'src/http/routes/body.ts': [
        "import type { Static } from 'typebox';",
        "import { Type } from 'typebox';",
        'export const Body = Type.Object({});',
        'export type Body = Static<typeof Body>;',
      ].join('\n'),
      'src/http/routes/nested/answer.ts': [
        "import { type Static, Type as T } from 'typebox';",
        'export const Answer = Type.Union([A, B]);',
        "export const Raw = { type: 'object', properties: {} };",
      ].join('\n'),
      // Naming a shape from src/api/ and a type from TypeBox declares nothing.
      'src/http/routes/fine.ts': [
        "import { type Static } from 'typebox';",
        "import { Planning } from '../../api/transfers.js';",
        'export const response = { 202: Planning };',
        'export type Answer = Static<typeof Planning>;',
      ].join('\n'),
    })) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    assert.deepEqual(shapesDeclared(dir, 'src/http/routes'), [
      'src/http/routes/body.ts:3: Type.Object(',
      'src/http/routes/body.ts:2: a value import of typebox',
      'src/http/routes/nested/answer.ts:2: Type.Union(',
      'src/http/routes/nested/answer.ts:1: a value import of typebox',
      'src/http/routes/nested/answer.ts:3: a JSON Schema object',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// One lease model (src/queue/leased.ts, src/queue/README.md): every leased table takes, renews, takes
// back, hands back and frees its leases through src/queue/leases.ts, so no file outside src/queue
// writes a lease column. src/db declares the columns (schema.ts) and creates them (migrations, frozen
// in time), and writes none at run time. One column of another table shares a lease column's name:
// copy_checkpoints.lease_owner names which holder of the work's lease wrote a checkpoint
// (src/engine/checkpoints.ts); it ends nothing and nobody renews or takes it back.
const LEASE_COLUMNS = [...new Set(LEASED.flatMap((leased) => [leased.owner, leased.until]))];
const LEASE_WRITE_ALLOWED: Record<string, readonly string[]> = {
  'src/engine/checkpoints.ts': ['lease_owner'],
};

/**
 * Each write of a lease column in the .ts files of src/ outside src/queue and src/db, as `file:line:
 * column`: a key of an object (Kysely's set and values), an assignment in an SQL SET list, Kysely's
 * set('column', …) or an insert's select `as('column')`. A read (where, is null, <) is none of these.
 */
function leaseWrites(base: string): string[] {
  const names = LEASE_COLUMNS.join('|');
  const writes = [
    new RegExp(`(?<![\\w.$])['"]?(${names})['"]?\\s*:(?!:)`, 'g'),
    new RegExp(`(?:\\bset\\b|,)\\s*(?:\\w+\\.)?(${names})\\s*=(?!=)`, 'gi'),
    new RegExp(`\\.(?:set|as)\\(\\s*['"](${names})['"]`, 'g'),
  ];
  const found: string[] = [];
  for (const name of readdirSync(join(base, 'src'), { recursive: true, encoding: 'utf8' }).sort()) {
    const file = `src/${name.split('\\').join('/')}`;
    if (!file.endsWith('.ts') || file.startsWith('src/queue/') || file.startsWith('src/db/')) continue;
    // Comments are words: their lines are blanked, so that line numbers stay.
    const text = readFileSync(join(base, file), 'utf8')
      .split('\n')
      .map((line) => (/^\s*(\/\/|\*|\/\*)/.test(line) ? '' : line))
      .join('\n');
    for (const write of writes) {
      for (const m of text.matchAll(write)) {
        const column = m[1] ?? '';
        if (LEASE_WRITE_ALLOWED[file]?.includes(column)) continue;
        const at = m.index + m[0].lastIndexOf(column);
        found.push(`${file}:${text.slice(0, at).split('\n').length}: ${column}`);
      }
    }
  }
  return found.sort();
}

test('no file outside src/queue writes a lease column: every lease is taken, renewed, taken back and freed there', () => {
  assert.deepEqual(leaseWrites(root), [], 'write the lease through src/queue/leases.ts');
});

test('the lease rule catches a write of a lease column outside src/queue: an object key, an SQL SET, set(), as(); not a read, a comment, src/queue or the checkpoint holder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-layering-'));
  try {
    for (const [file, text] of Object.entries({
      'src/lifecycle/probe.ts': [
        "export const a = (q) => q.updateTable('jobs').set({ status: 'failed', lease_owner: null,",
        "  lease_expires_at: null }).where('lease_owner', '=', owner);",
      ].join('\n'),
      'src/domain/sends/probe.ts': [
        'export const b = sql`update sends set status = $1,',
        '  lease_owner = $2, lease_expires_at = $3',
        '  where lease_owner = $4 and (lease_owner is null or lease_expires_at < $5)`;',
        '// a comment: lease_owner: null, set lease_expires_at = 0',
        'export const c = sql`select min(case when lease_owner is not null and lease_expires_at > run_after',
        '  then lease_expires_at else run_after end) from sends`;',
      ].join('\n'),
      'src/domain/locations/probe.ts': [
        "export const d = (q) => q.updateTable('locations').set('refresh_lease_expires_at', 0);",
        "export const e = (eb) => eb.val(owner).as('refresh_lease_owner');",
        "export const f = (eb) => eb('refresh_lease_owner', 'is', null);",
      ].join('\n'),
      'src/queue/probe.ts': 'export const g = { lease_owner: null, lease_expires_at: null };\n',
      'src/db/schema.ts': 'export interface T { lease_owner: string | null }\n',
      'src/engine/checkpoints.ts': [
        "export const h = (q) => q.updateTable('copy_checkpoints').set({ lease_owner: owner });",
        'export const i = { lease_expires_at: 0 };',
      ].join('\n'),
    })) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    assert.deepEqual(leaseWrites(dir), [
      'src/domain/locations/probe.ts:1: refresh_lease_expires_at',
      'src/domain/locations/probe.ts:2: refresh_lease_owner',
      'src/domain/sends/probe.ts:2: lease_expires_at',
      'src/domain/sends/probe.ts:2: lease_owner',
      'src/engine/checkpoints.ts:2: lease_expires_at',
      'src/lifecycle/probe.ts:1: lease_owner',
      'src/lifecycle/probe.ts:2: lease_expires_at',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Provider knowledge lives with the provider (src/stores/*/declaration.ts, docs/api.md "Providers"): the
// console builds its location forms from GET /v1/providers, so no file under ui/src names a field of a
// provider's secret or metadata, and a field added to one store's declaration reaches the forms with no
// change to the console. A key of two words or more (access_key_id) is named wherever it appears in
// code; a one-word key (region, endpoint, scopes) only as a string literal ('region'), not a JSX
// attribute's (class="scopes"), or a member of metadata or a secret (metadata.region), since the same
// word is ordinary elsewhere (an API key's `scopes`, a webhook's endpoint). Comments may name any field.
const PROVIDER_FIELDS = [
  ...new Set(
    Object.values(DECLARATIONS).flatMap((d: ProviderDeclaration) =>
      [...d.secret, ...d.metadata].map((f) => f.key),
    ),
  ),
].sort();

const escapeRegExp = (word: string) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Each provider field named in a .ts or .tsx file under `dir`, as `path:line: key`. */
function providerFieldsNamed(base: string, dir: string, keys: readonly string[]): string[] {
  const patterns = keys.map((key) => {
    const k = escapeRegExp(key);
    return {
      key,
      pattern: key.includes('_')
        ? new RegExp(`\\b${k}\\b`)
        : new RegExp(`(?<!=)(['"\`])${k}\\1|\\b(metadata|secret)\\s*\\??\\.\\s*${k}\\b`),
    };
  });
  const found: string[] = [];
  for (const name of readdirSync(join(base, dir), { recursive: true, encoding: 'utf8' }).sort()) {
    if (!/\.tsx?$/.test(name)) continue;
    const path = join(base, dir, name);
    const file = relative(base, path).split('\\').join('/');
    const text = readFileSync(path, 'utf8').replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '));
    for (const [i, line] of text.split('\n').entries()) {
      const code = line.replace(/(^|\s)\/\/.*$/, '');
      for (const { key, pattern } of patterns) if (pattern.test(code)) found.push(`${file}:${i + 1}: ${key}`);
    }
  }
  return found;
}

test('no file under ui/src names a provider field: the location forms come from GET /v1/providers', () => {
  assert.ok(PROVIDER_FIELDS.includes('access_key_id') && PROVIDER_FIELDS.includes('region'));
  assert.deepEqual(
    providerFieldsNamed(root, 'ui/src', PROVIDER_FIELDS),
    [],
    "declare the field in its store's declaration.ts (src/stores/), which GET /v1/providers serves",
  );
});

test('the provider-field rule catches a console file that names one, not words in comments or other names', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-layering-'));
  try {
    for (const [file, text] of Object.entries({
      'ui/src/pages/form.tsx': [
        "const fields = [{ key: 'region', label: 'Region' }];",
        'const id = values.access_key_id;',
        'if (metadata?.endpoint) send(location.metadata.scopes);',
        '/* force_path_style in a comment */ const ok = 1;',
      ].join('\n'),
      'ui/src/deep/token.ts': [
        '// access_token in a comment is words',
        'const body = { refresh_token: t };',
      ].join('\n'),
      // An API key's scopes, a webhook's endpoint, an expiry in words: not provider fields.
      'ui/src/fine.tsx': [
        'const granted = key.scopes; const body = { scopes: granted };',
        'const list = <details class="scopes">{granted}</details>;',
        "const hint = 'Check the endpoint'; // 'region' in a comment",
        '/**',
        " * 'service_account_json' in a block comment",
        ' */',
      ].join('\n'),
    })) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    assert.deepEqual(providerFieldsNamed(dir, 'ui/src', PROVIDER_FIELDS), [
      'ui/src/deep/token.ts:2: refresh_token',
      'ui/src/pages/form.tsx:1: region',
      'ui/src/pages/form.tsx:2: access_key_id',
      'ui/src/pages/form.tsx:3: endpoint',
      'ui/src/pages/form.tsx:3: scopes',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// The clients call the API through its route map (src/api/routes.ts) and take its types from there:
// the rule clients-through-the-route-map (.dependency-cruiser.mjs) keeps them from importing another
// file of src/api/, and this one from writing a shape of the API themselves. A type declared in ui/src
// or src/cli copies one when it bears the name of a type src/api/ exports, or when it lists three
// fields or more, every one a field of one object that src/api/ declares (nested objects included).

/** The names of the types src/api/ exports (the route map's own helpers aside). */
function apiTypeNames(base: string): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync(join(base, 'src/api')).filter(
    (f) => f.endsWith('.ts') && f !== 'routes.ts',
  )) {
    const text = readFileSync(join(base, 'src/api', file), 'utf8');
    for (const m of text.matchAll(/^export\s+(?:type|interface)\s+(\w+)/gm)) names.add(m[1] ?? '');
    for (const m of text.matchAll(/^export\s+(type\s+)?\{([^}]*)\}/gm))
      for (const item of (m[2] ?? '').split(',')) {
        const typed = /^\s*type\s+(\w+)/.exec(item)?.[1] ?? (m[1] ? /^\s*(\w+)/.exec(item)?.[1] : undefined);
        if (typed) names.add(typed);
      }
  }
  names.delete('');
  return names;
}

type Schema = { type?: unknown; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[] };

/** Every object schema src/api/ exports, and those nested in them, by where: its fields. */
async function apiObjects(): Promise<Map<string, string[]>> {
  const dir = new URL('../../src/api/', import.meta.url);
  const objects = new Map<string, string[]>();
  const walk = (where: string, schema: Schema | undefined, depth: number) => {
    if (schema === undefined || typeof schema !== 'object' || depth > 8) return;
    if (schema.type === 'object' && schema.properties) {
      objects.set(where, Object.keys(schema.properties));
      for (const [key, value] of Object.entries(schema.properties)) walk(`${where}.${key}`, value, depth + 1);
    }
    if (schema.type === 'array') walk(`${where}[]`, schema.items, depth + 1);
    for (const [i, option] of (schema.anyOf ?? []).entries()) walk(`${where}|${i}`, option, depth + 1);
  };
  // The schemas as this file runs: compiled beside it (scripts/test-tree.mjs, where the .ts files are
  // there too), or as TypeScript through a loader.
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith(ext) || file.endsWith('.d.ts')) continue;
    const module = (await import(new URL(file, dir).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module))
      if (value && typeof value === 'object') walk(name, value as Schema, 0);
  }
  return objects;
}

/** The top-level field names of a `{ … }` type body. */
function fieldsOf(body: string): string[] {
  let flat = body.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  for (let previous = ''; previous !== flat; ) {
    previous = flat;
    flat = flat.replace(/\{[^{}]*\}/g, '{}').replace(/\([^()]*\)/g, '()');
  }
  return [...flat.matchAll(/(?:^|[;,\n])\s*(?:readonly\s+)?['"]?([A-Za-z_$][\w$]*)['"]?\??\s*:/g)].map(
    (m) => m[1] ?? '',
  );
}

/** Each API type a .ts or .tsx file under `dirs` declares again, as `path:line: name (what it copies)`. */
function apiCopies(
  base: string,
  dirs: readonly string[],
  names: ReadonlySet<string>,
  objects: ReadonlyMap<string, readonly string[]>,
): string[] {
  const found: string[] = [];
  for (const dir of dirs)
    for (const name of readdirSync(join(base, dir), { recursive: true, encoding: 'utf8' }).sort()) {
      if (!/\.tsx?$/.test(name)) continue;
      const file = `${dir}/${name.split('\\').join('/')}`;
      const text = readFileSync(join(base, file), 'utf8');
      const declared =
        /^[ \t]*(?:export\s+)?(?:interface\s+(\w+)(?:<[^>{]*>)?(?:\s+extends\s+[^{]+)?\s*(\{)|type\s+(\w+)(?:<[^>=]*>)?\s*=\s*(\{)?)/gm;
      for (const m of text.matchAll(declared)) {
        const type = m[1] ?? m[3] ?? '';
        const line = text.slice(0, m.index).split('\n').length;
        if (names.has(type)) {
          found.push(`${file}:${line}: ${type} (a type of src/api)`);
          continue;
        }
        if (m[2] === undefined && m[4] === undefined) continue;
        // The body: from its { to the } that closes it.
        const open = m.index + m[0].length - 1;
        let depth = 0;
        let close = open;
        for (; close < text.length; close++) {
          if (text[close] === '{') depth++;
          else if (text[close] === '}' && --depth === 0) break;
        }
        const fields = fieldsOf(text.slice(open + 1, close));
        if (fields.length < 3) continue;
        const copied = [...objects].find(([, keys]) => fields.every((f) => keys.includes(f)));
        if (copied) found.push(`${file}:${line}: ${type} (the fields of ${copied[0]})`);
      }
    }
  return found;
}

const API_NAMES = apiTypeNames(root);
const API_OBJECTS = await apiObjects();

test('no file under ui/src or src/cli declares a type of the API again: each comes from src/api/routes.ts', () => {
  assert.ok(
    API_NAMES.has('Job') && API_NAMES.has('ErrorBody') && API_OBJECTS.has('ApiKey'),
    'the API is read',
  );
  assert.deepEqual(
    apiCopies(root, ['ui/src', 'src/cli'], API_NAMES, API_OBJECTS),
    [],
    "name the API's type through src/api/routes.ts (the route map) instead",
  );
});

test('the client rules catch a console or CLI file that copies an API shape or imports one beside the route map', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-layering-'));
  try {
    for (const [file, text] of Object.entries({
      // A copy under the API's own name, one under another name, one nested in an answer.
      'ui/src/pages/webhooks.tsx': [
        'interface Webhook {',
        '  id: string;',
        "  status: 'enabled' | 'disabled';",
        '}',
        'export type Key = {',
        '  id: string;',
        '  name: string;',
        '  /** when */ created_at: string;',
        '  scopes?: string[];',
        '};',
      ].join('\n'),
      'src/cli/commands/jobs.ts': [
        'export interface Failure<T> {',
        '  key: string;',
        '  error: string; attempts: number;',
        '}',
      ].join('\n'),
      // Names of the clients' own, a type taken from the map, and a local shape: not copies.
      'ui/src/fine.ts': [
        "import type { Job } from '../../src/api/routes.js';",
        'type Failure = Job["counts"];',
        'interface Sample { at: number; bytes: number; objects: number }',
        'export interface Column<T> { name: string; cell: (row: T) => string }',
      ].join('\n'),
    })) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    assert.deepEqual(apiCopies(dir, ['ui/src', 'src/cli'], API_NAMES, API_OBJECTS), [
      'ui/src/pages/webhooks.tsx:1: Webhook (a type of src/api)',
      'ui/src/pages/webhooks.tsx:5: Key (the fields of ApiKey)',
      'src/cli/commands/jobs.ts:1: Failure (the fields of Failures.failures[])',
    ]);
    // And the import rules: a client that takes a schema file rather than the map, a route map that
    // loads a value.
    for (const [file, text] of Object.entries({
      'src/api/shares.ts': 'export const Share = 1;\nexport type Share = number;\n',
      'src/api/routes.ts': "import { Share } from './shares.js';\nexport const pathOf = () => Share;\n",
      'ui/src/pages/shares.tsx':
        "import type { Share } from '../../../src/api/shares.js';\nexport type S = Share;\n",
      'src/cli/share.ts': "import { pathOf } from '../api/routes.js';\nexport const p = pathOf;\n",
    })) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    writeFileSync(join(dir, 'tsconfig.json'), readFileSync(join(root, 'tsconfig.json')));
    const found = (await violations(dir, ['src', 'ui/src'])).map(line).sort();
    assert.deepEqual(found, [
      'clients-through-the-route-map: ui/src/pages/shares.tsx → src/api/shares.ts',
      'route-map-types-only: src/api/routes.ts → src/api/shares.ts',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
