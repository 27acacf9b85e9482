// `npm start` builds only when a source is newer than the last build (README, "Start-up"):
// scripts/build.mjs --check on a throw-away tree laid out like the project.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ROOT } from '../support/root.js';

// From the checkout itself: through the runner's tree of links (test/support/root.ts) the script would
// not know it is the program being run, and would print nothing.
const SCRIPT = join(ROOT, 'scripts/build.mjs');
const root = mkdtempSync(join(tmpdir(), 'ferry-build-'));
after(() => rmSync(root, { recursive: true, force: true }));

function check(): string {
  const r = spawnSync(process.execPath, [SCRIPT, '--check', '--root', root], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

/** Writes `path` under the tree with its modification time `seconds` after the epoch. */
function write(path: string, seconds: number): void {
  const full = join(root, path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, 'x');
  utimesSync(full, seconds, seconds);
}

test('a tree never built needs a build; after one it is up to date until a source under src/, ui/ or a build input changes', () => {
  write('src/server.ts', 1_000);
  write('ui/src/main.tsx', 1_000);
  assert.equal(check(), 'no finished build yet');

  write('dist/.build-stamp', 2_000);
  assert.equal(check(), 'up to date');

  write('ui/src/main.tsx', 3_000);
  assert.equal(check(), 'a source changed since the last build');
  write('dist/.build-stamp', 4_000);
  assert.equal(check(), 'up to date');

  write('src/deep/folder/new.ts', 5_000);
  assert.equal(check(), 'a source changed since the last build');
  write('dist/.build-stamp', 6_000);

  write('package-lock.json', 7_000);
  assert.equal(check(), 'a source changed since the last build');
  write('dist/.build-stamp', 8_000);

  // Files outside the sources (docs, tests, data) never force a build.
  write('docs/api.md', 9_000);
  write('test/a.test.ts', 9_000);
  write('data/ferry.db', 9_000);
  assert.equal(check(), 'up to date');
});
