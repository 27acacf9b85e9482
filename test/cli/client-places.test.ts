// `ferry` as an API client (docs/cli.md), run as a real process against a ferry service in this
// process, on both databases: locations, ls, keys, login/whoami/logout.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { eachDatabase, unique } from '../support/fixtures.js';
import { seedBucket } from '../support/transfers.js';
import { ferry } from './run.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry client', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('locations: create, list (ls and locations), get, status, refresh, rename, set-secret, delete', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const listed = json<Array<Record<string, unknown>>>(await run('ls', '--json'));
    assert.deepEqual(
      listed.map((l) => [l.label, l.provider, l.status]),
      [[label, 's3', 'active']],
    );
    const table = ok(await run('locations')).stdout;
    assert.match(table, /^LABEL\s+PROVIDER\s+STATUS\s+CREATED\s+ID\n/);
    assert.match(
      table,
      new RegExp(
        `^${label}\\s+s3\\s+active\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+${listed[0]?.id}$`,
        'm',
      ),
    );
    assert.equal(json(await run('locations', 'get', label, '--json')).id, listed[0]?.id);
    const status = json(await run('locations', 'status', String(listed[0]?.id), '--json'));
    assert.equal(status.status, 'active');
    ok(await run('locations', 'refresh', label));
    const renamed = `${label}-new`;
    assert.equal(json(await run('locations', 'rename', label, renamed, '--json')).label, renamed);
    const secret = unique('SAK');
    const replaced = await run(
      'locations',
      'set-secret',
      renamed,
      '--access-key-id',
      'AKID2',
      '--secret-access-key',
      secret,
      '--endpoint',
      s.s3.endpoint,
      '--region',
      'eu-west-1',
    );
    assert.match(ok(replaced).stdout, /^secret replaced\n/);
    assert.match(
      replaced.stdout,
      /^metadata: {"endpoint":"http:\/\/127\.0\.0\.1:\d+","region":"eu-west-1"}$/m,
    );
    assert.ok(!replaced.stdout.includes(secret), 'the secret is never printed');
    assert.match(ok(await run('locations', 'delete', renamed)).stdout, /^deleted /);
    assert.deepEqual(json(await run('locations', '--json')), []);
  });

  test('ls lists a bucket with sizes in binary units, --recurse goes deeper, --json is the API answer', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const bucket = await seedBucket(s.client, {
      'a.txt': Buffer.alloc(1536),
      'dir/b.bin': Buffer.alloc(3 * 1024 * 1024),
    });
    const roots = json<{ hint?: string; entries: Array<{ name: string }> }>(await run('ls', label, '--json'));
    assert.ok(roots.entries.some((e) => e.name === bucket));
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

  test('keys: create prints the new key once, list, rename, revoke; the revoked key then exits 5', async () => {
    const { run, env } = await s.workspace();
    const created = json(await run('keys', 'create', '--name', 'deploy', '--json'));
    assert.deepEqual(Object.keys(created).sort(), ['created_at', 'id', 'name', 'token']);
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

  test('login checks the key and saves it in a 0600 file in a 0700 directory; whoami and commands use it; logout removes it', async () => {
    const { token } = await s.workspace();
    const config = join(s.home, unique('cfg'));
    const env = { XDG_CONFIG_HOME: config };
    const refused = await ferry(['login', '--url', s.url], { env, stdin: `fry_${'y'.repeat(43)}\n` });
    assert.equal(refused.code, 5);
    assert.throws(
      () => statSync(join(config, 'ferry', 'config.json')),
      /ENOENT/,
      'a refused key is not saved',
    );
    const login = await ferry(['login', '--url', s.url], { env, stdin: `${token}\n` });
    ok(login);
    assert.ok(!login.stdout.includes(token) && !login.stderr.includes(token), 'the key is never printed');
    const file = join(config, 'ferry', 'config.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(join(config, 'ferry')).mode & 0o777, 0o700);
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { url: s.url, api_key: token });
    const who = json(await ferry(['whoami', '--json'], { env }));
    assert.deepEqual(who, {
      url: s.url,
      url_from: 'config file',
      key_from: 'config file',
      key_valid: true,
      locations: 0,
    });
    ok(await ferry(['ls'], { env }));
    ok(await ferry(['logout'], { env }));
    assert.throws(() => statSync(file), /ENOENT/);
    assert.equal((await ferry(['ls'], { env })).code, 5);
  });
});
