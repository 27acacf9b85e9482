// `ferry mb` (docs/cli.md) as a real process against a ferry service in this process, on both
// databases: a bucket made on s3rver lists at the root, a second mb exits 4 (conflict) with the
// server's words, a name the provider refuses exits with the rule, and a place that is not
// location/bucket is a usage error.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase, unique } from '../support/fixtures.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry mb', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('mb makes a bucket that ls lists; again exits 4; a refused name and a deeper path do not', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const bucket = unique('mb').toLowerCase();
    assert.match(ok(await run('mb', `${label}/${bucket}`)).stdout, new RegExp(`^made ${label}/${bucket}`));
    const roots = json<{ entries: Array<{ name: string; size: number }> }>(await run('ls', label, '--json'));
    assert.deepEqual(
      roots.entries.filter((e) => e.name === bucket).map((e) => e.size),
      [-1],
    );
    const again = await run('mb', `${label}:${bucket}/`);
    assert.equal(again.code, 4, again.stderr);
    assert.match(again.stderr, /already exists/);
    const refused = await run('mb', `${label}/Not_Allowed`);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /bucket names hold only lower-case letters/);
    const deep = await run('mb', `${label}/${bucket}/folder`);
    assert.equal(deep.code, 2, deep.stderr);
    assert.match(deep.stderr, /name one bucket after the location/);
    const json2 = json<{ name: string; path: string; isDir: boolean }>(
      await run('mb', `${label}/${bucket}-two`, '--json'),
    );
    assert.deepEqual([json2.name, json2.path, json2.isDir], [`${bucket}-two`, `${bucket}-two`, true]);
  });
});
