// Which tier each test file belongs to (docs/testing.md, "The tiers"), read from what the file imports:
//   long      every file under test/long/: the long proofs, run by `npm run test:long` only.
//   system    the file, or a test helper it imports (test/**, bench/**, followed to the end), starts
//             processes or servers or opens sockets of its own: an import of node:child_process,
//             node:net, node:http(s), playwright-core, s3rver, azurite, smtp-server or the helpers that
//             start them (SYSTEM_HELPERS).
//   database  not system, and it reaches a database: the file or a helper it imports calls
//             eachDatabase/testDatabases/startTestApp/createSchema, or imports pg, better-sqlite3 or the
//             code that opens ferry's database (src/db/database, src/services).
//   unit      the rest: no process, no socket, no database. scripts/test-guard.mjs holds a unit file to
//             that while it runs (a socket, a process or SQLite fails the test that tried), and a
//             database file to "no process, and sockets to PostgreSQL only".
// `node scripts/test.mjs --list` prints each file's tier and the import that decided it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const TIERS = ['static', 'unit', 'database', 'system', 'long'];

const SYSTEM_MODULES = new Set([
  'node:child_process',
  'child_process',
  'node:net',
  'net',
  'node:http',
  'http',
  'node:https',
  'https',
  'node:http2',
  'node:dgram',
  'playwright-core',
  's3rver',
  'azurite',
  'smtp-server',
]);
const DATABASE_MODULES = new Set(['pg', 'better-sqlite3']);
const DATABASE_SOURCES = ['src/db/database.ts', 'src/services.ts'];
const DATABASE_CALLS = /\b(eachDatabase|testDatabases|startTestApp|createSchema)\(/;

/** Every *.test.ts under `dir`, relative to `root`, sorted. */
export function findTests(root, dir = join(root, 'test')) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...findTests(root, full));
    else if (name.endsWith('.test.ts')) out.push(relative(root, full));
  }
  return out.sort();
}

/** The modules a source file imports at run time (`import type` and `export type` left out). */
function importsOf(text) {
  const out = [];
  const pattern =
    /(?:^|[;\s])(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const match of text.matchAll(pattern)) {
    if (match[1]) continue;
    out.push(match[2] ?? match[3]);
  }
  return out;
}

function resolveLocal(from, specifier) {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    base,
    `${base}.ts`,
  ]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/**
 * The tier of each file, with the reason: `{ file, tier, reason }`. Helpers under test/ and bench/ are
 * followed; src/ is not (it is the code under test), except that importing DATABASE_SOURCES marks a
 * file as reaching the database.
 */
export function classify(root, files) {
  const memo = new Map();
  // What one module (and the test helpers it imports) reaches: { system?: reason, database?: reason }.
  const reach = (path, seen) => {
    if (memo.has(path)) return memo.get(path);
    if (seen.has(path)) return {};
    seen.add(path);
    const text = readFileSync(path, 'utf8');
    const here = relative(root, path);
    const found = {};
    const call = DATABASE_CALLS.exec(text);
    if (call) found.database = `${here} calls ${call[1]}`;
    for (const specifier of importsOf(text)) {
      if (found.system) break;
      if (SYSTEM_MODULES.has(specifier)) {
        found.system = `${here} imports ${specifier}`;
      } else if (DATABASE_MODULES.has(specifier)) {
        found.database ??= `${here} imports ${specifier}`;
      } else if (specifier.startsWith('.')) {
        const target = resolveLocal(path, specifier);
        if (!target) continue;
        const rel = relative(root, target);
        if (DATABASE_SOURCES.includes(rel)) found.database ??= `${here} imports ${rel}`;
        if (!(rel.startsWith('test/') || rel.startsWith('bench/'))) continue;
        const inner = reach(target, seen);
        if (inner.system) found.system = inner.system;
        if (inner.database) found.database ??= inner.database;
      }
    }
    memo.set(path, found);
    return found;
  };
  return files.map((file) => {
    if (file.startsWith('test/long/')) return { file, tier: 'long', reason: 'under test/long/' };
    const found = reach(join(root, file), new Set());
    if (found.system) return { file, tier: 'system', reason: found.system };
    if (found.database) return { file, tier: 'database', reason: found.database };
    return { file, tier: 'unit', reason: 'no process, socket or database' };
  });
}
