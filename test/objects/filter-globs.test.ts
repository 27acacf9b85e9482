// Where a filter's glob applies (docs/api.md, "Filters"), as a unit: a glob without `/` is matched against
// an object's name at any depth below the source prefix, as rclone's filters are; one with `/` is
// anchored at the prefix. The same rule for include and exclude, and for a plain path's name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileFilter, parseFilter } from '../../src/objects/filter.js';
import { DEFAULT_PATTERN_LIMITS } from '../../src/objects/glob.js';

const PATHS = [
  'a.tmp',
  'notes.txt',
  '.DS_Store',
  'photos/.DS_Store',
  'photos/2026/x.tmp',
  'photos/2026/y.jpg',
  'logs/1.log',
  'archive/logs/2.log',
  'tmp/keep.txt',
];

async function passing(filter: Record<string, unknown>): Promise<string[]> {
  const compiled = compileFilter(parseFilter(filter, DEFAULT_PATTERN_LIMITS));
  assert.ok(compiled);
  const out: string[] = [];
  for (const path of PATHS) if (await compiled.passes(path, { size: 1 })) out.push(path);
  return out;
}

test('an exclude without "/" leaves out that name at any depth, as rclone does', async () => {
  assert.deepEqual(await passing({ exclude: ['*.tmp', '.DS_Store'] }), [
    'notes.txt',
    'photos/2026/y.jpg',
    'logs/1.log',
    'archive/logs/2.log',
    'tmp/keep.txt',
  ]);
});

test('an include without "/" takes that name at any depth', async () => {
  assert.deepEqual(await passing({ include: ['*.log', '{y.jpg,keep.txt}'] }), [
    'photos/2026/y.jpg',
    'logs/1.log',
    'archive/logs/2.log',
    'tmp/keep.txt',
  ]);
});

test('a glob with "/" is anchored at the source prefix: logs/** is the top folder only, **/logs/** every one', async () => {
  assert.deepEqual(await passing({ include: ['logs/**'] }), ['logs/1.log']);
  assert.deepEqual(await passing({ include: ['**/logs/**'] }), ['logs/1.log', 'archive/logs/2.log']);
  assert.deepEqual(await passing({ include: ['photos/*.tmp'] }), []);
  assert.deepEqual(await passing({ include: ['photos/*/*.tmp'] }), ['photos/2026/x.tmp']);
  // A "/" inside braces anchors the whole glob too.
  assert.deepEqual(await passing({ include: ['{tmp/keep.txt,a.tmp}'] }), ['a.tmp', 'tmp/keep.txt']);
  // A name glob never matches a folder's name: tmp is no object, the files below it stay.
  assert.deepEqual(await passing({ exclude: ['tmp', 'photos'] }), PATHS);
});

test('a glob starting with "/" is refused, saying that a "/" already anchors', () => {
  assert.throws(
    () => parseFilter({ exclude: ['/tmp/**'] }, DEFAULT_PATTERN_LIMITS),
    /filter\.exclude\[0\] must not start with "\/": a glob holding a "\/" is anchored at the source prefix already/,
  );
});
