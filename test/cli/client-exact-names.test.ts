// `ferry` as an API client (docs/cli.md, "Exact names"), a real process against a ferry service in this
// process, on both databases: beside `a.txt` and `b.txt`, rm, mv and share on `[ab].txt` touch that one
// file (a path without `*`, `?` or `{` is sent as an exact name), mv --dry-run shows the move preview,
// and --literal makes `report*.txt` one file.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../support/fixtures.js';
import { readS3, seedBucket } from '../support/transfers.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry client, exact names', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('rm, mv and share on [ab].txt touch only it; mv --dry-run previews; --literal makes report*.txt one file', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const seed = {
      '[ab].txt': 'AB',
      'a.txt': 'A',
      'b.txt': 'B',
      'report*.txt': '1',
      'report-final.txt': '2',
    };
    const bucket = await seedBucket(s.client, seed);
    const at = `${label}:${bucket}`;
    const present = async () => {
      const out: string[] = [];
      for (const k of [...Object.keys(seed), 'out/[ab].txt', 'out/report*.txt', 'out/report-final.txt'])
        if ((await readS3(s.client, bucket, k)) !== undefined) out.push(k);
      return out.sort();
    };

    const shared = json(await run('share', `${at}/[ab].txt`, '--json'));
    assert.match(String(shared.url), /^http/);

    const dry = ok(await run('mv', `${at}/[ab].txt`, `${at}/out/`, '--dry-run')).stdout;
    assert.match(dry, /\[ab\]\.txt/);
    assert.match(dry, /would move 1 file\n$/);
    assert.doesNotMatch(dry, /\/a\.txt/);
    ok(await run('mv', `${at}/[ab].txt`, `${at}/out/`, '--watch'));
    assert.deepEqual(await present(), ['a.txt', 'b.txt', 'out/[ab].txt', 'report*.txt', 'report-final.txt']);

    const rmDry = ok(await run('rm', `${at}/out/[ab].txt`, '--dry-run')).stdout;
    assert.match(rmDry, /would remove 1 file, 2 B\n$/);
    ok(await run('rm', `${at}/out/[ab].txt`, '--yes', '--watch'));
    assert.deepEqual(await present(), ['a.txt', 'b.txt', 'report*.txt', 'report-final.txt']);

    const pattern = ok(await run('mv', `${at}/report*.txt`, `${at}/out/`, '--dry-run')).stdout;
    assert.match(pattern, /would move 2 files\n$/);
    ok(await run('mv', `${at}/report*.txt`, `${at}/out/`, '--literal', '--watch'));
    assert.deepEqual(await present(), ['a.txt', 'b.txt', 'out/report*.txt', 'report-final.txt']);
    assert.equal((await readS3(s.client, bucket, 'out/report*.txt'))?.toString(), '1');
  });
});
