// `ferry` as an API client (docs/cli.md), run as a real process against a ferry service in this
// process, on both databases (one test a file, to stay well inside the per-file time limit
// on a loaded machine): mv moves, pull fetches a URL, rm previews and refuses without a terminal or --yes, removes with --yes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../support/fixtures.js';
import { readS3, seedBucket } from '../support/transfers.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry client', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('mv moves, pull fetches a URL, rm previews and refuses without a terminal or --yes, removes with --yes', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const bucket = await seedBucket(s.client, { 'm.txt': 'move me', 'r/1.txt': '1', 'r/2.txt': '22' });
    ok(await run('mv', `${label}:${bucket}/m.txt`, `${label}:${bucket}/moved/m.txt`, '--watch'));
    assert.equal(await readS3(s.client, bucket, 'm.txt'), undefined);
    assert.equal((await readS3(s.client, bucket, 'moved/m.txt'))?.toString(), 'move me');

    const pulled = json(await run('pull', `${s.origin}/file`, `${label}:${bucket}/pulled.txt`, '--json'));
    assert.deepEqual(Object.keys(pulled).sort(), ['id', 'status']);
    ok(await run('transfers', 'watch', String(pulled.id), '--interval', '0.1'));
    assert.equal((await readS3(s.client, bucket, 'pulled.txt'))?.toString(), 'pulled');

    const dry = ok(await run('rm', `${label}:${bucket}/r/*`, '--dry-run')).stdout;
    assert.match(dry, /would remove 2 files, 3 B\n$/);
    const refused = await run('rm', `${label}:${bucket}/r/*`);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /^ferry: refusing to remove 2 files, 3 B without confirmation: stdin is not a terminal\. Pass --yes/,
    );
    assert.equal((await readS3(s.client, bucket, 'r/1.txt'))?.toString(), '1', 'nothing removed');
    ok(await run('rm', `${label}:${bucket}/r/*`, '--yes', '--watch'));
    assert.equal(await readS3(s.client, bucket, 'r/1.txt'), undefined);
    assert.equal(await readS3(s.client, bucket, 'r/2.txt'), undefined);
  });
});
