// `ferry` as an API client (docs/cli.md), run as a real process against a ferry service in this
// process, on both databases (one test a file, to stay well inside the per-file time limit
// on a loaded machine): ls lists a bucket with sizes in binary units, --recurse goes deeper, --json is the API answer.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../support/fixtures.js';
import { seedBucket } from '../support/transfers.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry client', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('ls lists a bucket with sizes in binary units, --recurse goes deeper, --json is the API answer', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const bucket = await seedBucket(s.client, {
      'a.txt': Buffer.alloc(1536),
      'dir/b.bin': Buffer.alloc(3 * 1024 * 1024),
    });
    const roots = json<{ hint?: string; entries: Array<{ name: string }> }>(await run('ls', label, '--json'));
    assert.ok(roots.entries.some((e) => e.name === bucket));
    // At a bucket store's root the note says the command to type, not the API's path field.
    const root = ok(await run('ls', label));
    assert.match(
      root.stderr,
      new RegExp(`these are buckets: ferry ls ${label}:<bucket>/ lists what one holds`),
    );
    const answer = json<{ entries: Array<{ path: string; size: number; isDir: boolean }> }>(
      await run('ls', `${label}:${bucket}`, '--json'),
    );
    assert.deepEqual(answer.entries.map((e) => [e.path, e.isDir]).sort(), [
      [`${bucket}/a.txt`, false],
      [`${bucket}/dir`, true],
    ]);
    const human = ok(await run('ls', `${label}:${bucket}`)).stdout;
    assert.match(human, /^\s*1\.5 KiB\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+a\.txt$/m);
    assert.match(human, /^\s*-\s+-\s+dir\/$/m);
    assert.match(human, /1 folder, 1 file, 1\.5 KiB\n$/);
    const deep = ok(await run('ls', `${label}/${bucket}`, '-R')).stdout;
    assert.match(deep, new RegExp(`^\\s*3\\.0 MiB\\s+\\S+ \\S+\\s+${bucket}/dir/b\\.bin$`, 'm'));
  });
});
