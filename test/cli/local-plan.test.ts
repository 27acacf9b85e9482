// What `ferry cp` with a path on this computer plans before a byte moves, and the progress line it
// draws (src/cli/transfer/plan.ts, progress.ts): on real folders in a temporary directory; the server
// side of the plan (a download's listing) is covered by client-local.test.ts.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { EXIT } from '../../src/cli/exit.js';
import { filesPath, planUpload } from '../../src/cli/transfer/plan.js';
import { progressLine } from '../../src/cli/transfer/progress.js';
import { hasLocalSide } from '../../src/cli/transfer/run.js';

const root = mkdtempSync(join(tmpdir(), 'ferry-plan-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('a folder uploads every file under the prefix, keys relative to it with / separators, in name order', async () => {
  const dir = join(root, 'site');
  mkdirSync(join(dir, 'a b', 'deep'), { recursive: true });
  mkdirSync(join(dir, 'empty'));
  writeFileSync(join(dir, 'index.html'), '<p>hi</p>');
  writeFileSync(join(dir, 'a b', '[ab].txt'), 'ab');
  writeFileSync(join(dir, 'a b', 'deep', 'z.bin'), Buffer.alloc(1000));
  symlinkSync(join(dir, 'a b'), join(dir, 'loop'));
  symlinkSync(join(dir, 'index.html'), join(dir, 'link.html'));
  const plan = await planUpload(dir, { location: 'photos', path: 'bucket/up' });
  assert.equal(plan.folder, true);
  assert.deepEqual(
    plan.tasks.map((t) => [t.local.slice(root.length), t.key, t.size]),
    [
      ['/site/a b/[ab].txt', 'bucket/up/a b/[ab].txt', 2],
      ['/site/a b/deep/z.bin', 'bucket/up/a b/deep/z.bin', 1000],
      ['/site/index.html', 'bucket/up/index.html', 9],
      ['/site/link.html', 'bucket/up/link.html', 9],
    ],
  );
  assert.deepEqual(
    plan.failures.map((f) => [f.path.slice(root.length), f.error.slice(root.length)]),
    [['/site/loop', '/site/loop is a link to a folder; links to folders are not followed']],
  );
  // Children before their parent, so that mv can remove the folders it emptied.
  assert.deepEqual(
    plan.dirs.map((d) => d.slice(root.length)),
    ['/site/empty', '/site/a b/deep', '/site/a b', '/site'],
  );
});

test('one file goes to the key given, or into a prefix ending in / (or the root) under its own name', async () => {
  const file = join(root, 'report.pdf');
  writeFileSync(file, 'pdf');
  const exact = await planUpload(file, { location: 'p', path: 'bucket/reports/r.pdf' });
  assert.deepEqual(
    exact.tasks.map((t) => t.key),
    ['bucket/reports/r.pdf'],
  );
  assert.equal(exact.folder, false);
  const into = await planUpload(file, { location: 'p', path: '/bucket//reports/' });
  assert.deepEqual(
    into.tasks.map((t) => t.key),
    ['bucket/reports/report.pdf'],
  );
});

test('a missing local path is exit 3, in words', async () => {
  await assert.rejects(planUpload(join(root, 'nope.txt'), { location: 'p', path: 'b/' }), (err: Error) => {
    assert.equal(err.message, `no file or folder ${join(root, 'nope.txt')} on this computer`);
    assert.equal((err as { exitCode?: number }).exitCode, EXIT.notFound);
    return true;
  });
});

test('two local paths are refused: ferry copies between this computer and a location', () => {
  assert.throws(() => hasLocalSide('./a', '/tmp/b'), /are both paths on this computer/);
  assert.equal(hasLocalSide('./a', 'photos:b/'), true);
  assert.equal(hasLocalSide('photos:b/a', '~/x'), true);
  assert.equal(hasLocalSide('photos:b/a', 'photos:c/'), false);
});

test('file URLs encode the location and each path segment, keeping the / between them', () => {
  assert.equal(
    filesPath('my photos', 'b/a b/[ab]#?.txt'),
    '/v1/files/my%20photos/b/a%20b/%5Bab%5D%23%3F.txt',
  );
});

test('the progress line shows percent, bytes of the total, rate, ETA, files and the current file', () => {
  const MiB = 1024 * 1024;
  assert.equal(
    progressLine(5 * MiB, { files: 4, bytes: 10 * MiB }, 1, 2, './site/big.bin', 200),
    ' 50%  5.0 MiB of 10 MiB  2.5 MiB/s  ETA 0:02  1/4 files  ./site/big.bin',
  );
  assert.equal(
    progressLine(0, { files: 1, bytes: 10 }, 0, 0, 'a\nb', 200),
    '  0%  0 B of 10 B  0 B/s  ETA --:--  0/1 files  a\\nb',
    'no rate yet: no ETA; a control character in a name is escaped',
  );
  const cut = progressLine(1, { files: 1, bytes: 2 }, 0, 1, 'x'.repeat(300), 60);
  assert.equal(cut.length, 59);
  assert.ok(cut.endsWith('…'));
});
