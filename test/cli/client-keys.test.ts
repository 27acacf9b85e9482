// `ferry` as an API client (docs/cli.md), run as a real process against a ferry service in this
// process, on both databases (one test a file, to stay well inside the per-file time limit
// on a loaded machine): keys.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../support/fixtures.js';
import { ferry } from './run.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry client', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('keys: create prints the new key once, list, rename, revoke; the revoked key then exits 5', async () => {
    const { run, env } = await s.workspace();
    const created = json(await run('keys', 'create', '--name', 'deploy', '--json'));
    assert.deepEqual(Object.keys(created).sort(), ['created_at', 'id', 'name', 'scopes', 'token']);
    const plain = ok(await run('keys', 'create', '--name', 'plain'));
    assert.match(plain.stdout, /^fry_[A-Za-z0-9_-]{43}\n$/);
    const keys = json<Array<{ id: string; name: string }>>(await run('keys', '--json'));
    assert.deepEqual(
      keys.map((k) => k.name),
      ['cli test', 'deploy', 'plain'],
    );
    ok(await run('keys', 'rename', String(created.id), 'deploy-2'));
    ok(await run('keys', 'revoke', String(created.id)));
    const listed = ok(await run('keys')).stdout;
    assert.match(listed, new RegExp(`^${created.id}\\s+deploy-2\\s+revoked `, 'm'));
    const revoked = await ferry(['ls'], { env: { ...env, FERRY_API_KEY: String(created.token) } });
    assert.equal(revoked.code, 5);
    assert.match(revoked.stderr, /run ferry login/);
    assert.ok(!revoked.stderr.includes(String(created.token)), 'the key is never printed');
  });
});
