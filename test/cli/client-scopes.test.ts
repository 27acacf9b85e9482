// `ferry` as an API client (docs/cli.md), run as a real process against a ferry service in this
// process, on both databases: scoped keys (docs/cli.md, "keys"; docs/api.md, "Scopes"). A key made
// with --scope does what its scopes allow and is refused the rest with the server's message (naming the
// scope) and exit 5; --scope takes only the five words, on both doors; keys ls and whoami show scopes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { eachDatabase, unique } from '../support/fixtures.js';
import { readS3, seedBucket } from '../support/transfers.js';
import { ferry } from './run.js';
import { json, ok, type Service, startService } from './service.js';

const LACKS = (scope: string) =>
  new RegExp(`^ferry: this API key lacks the "${scope}" scope \\(docs/api\\.md, "Scopes"\\); ferry whoami`);

await eachDatabase('ferry client', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('scopes: a read key lists but is refused cp, rm and keys create (exit 5, the scope named); --scope checks its words; read,admin cannot make a transfer key', async () => {
    const { run, env } = await s.workspace();
    const label = await s.location(run);
    const bucket = await seedBucket(s.client, { 'a.txt': 'a' });

    const bad = await run('keys', 'create', 'x', '--scope', 'read,wirte');
    assert.equal(bad.code, 2);
    assert.equal(
      bad.stderr,
      'ferry: --scope: "wirte" is not a scope; use one or more of read, transfer, remove, share, admin\n',
    );
    assert.equal((await run('keys', '--json')).stdout.match(/"name": "x"/), null, 'no key was made');

    const reader = json<{ token: string; scopes: string[] }>(
      await run('keys', 'create', 'reader', '--scope', 'read', '--json'),
    );
    assert.deepEqual(reader.scopes, ['read']);
    const asReader = (...args: string[]) => ferry(args, { env: { ...env, FERRY_API_KEY: reader.token } });
    assert.match(ok(await asReader('ls')).stdout, new RegExp(`^${label}\\s+s3\\s+active`, 'm'));
    ok(await asReader('ls', `${label}:${bucket}`));
    ok(await asReader('jobs'));

    const cp = await asReader('cp', `${label}:${bucket}/a.txt`, `${label}:${bucket}/b.txt`);
    assert.equal(cp.code, 5, cp.stderr);
    assert.match(cp.stderr, LACKS('transfer'));
    const rm = await asReader('rm', `${label}:${bucket}/a.txt`, '--yes');
    assert.equal(rm.code, 5, rm.stderr);
    assert.match(rm.stderr, LACKS('remove'));
    assert.equal((await readS3(s.client, bucket, 'a.txt'))?.toString(), 'a', 'nothing removed');
    const create = await asReader('keys', 'create', 'more');
    assert.equal(create.code, 5, create.stderr);
    assert.match(create.stderr, LACKS('admin'));
    assert.ok(!`${cp.stderr}${rm.stderr}${create.stderr}`.includes(reader.token), 'the key is never printed');

    // whoami needs no scope: any key may read itself (GET /v1/key).
    const who = ok(await asReader('whoami')).stdout;
    assert.match(who, /^key: {7}"reader" [0-9a-f-]{36}, from FERRY_API_KEY, accepted$/m);
    assert.match(who, /^scopes: {4}read$/m);

    const admin = json<{ token: string; scopes: string[] }>(
      await run('keys', 'create', '--name', 'keeper', '--scope', 'admin', '--scope', 'read', '--json'),
    );
    assert.deepEqual(admin.scopes, ['read', 'admin'], 'in the API order');
    const asAdmin = (...args: string[]) => ferry(args, { env: { ...env, FERRY_API_KEY: admin.token } });
    const beyond = await asAdmin('keys', 'create', 'copier', '--scope', 'transfer');
    assert.equal(beyond.code, 5, beyond.stderr);
    assert.match(
      beyond.stderr,
      /^ferry: a key can create keys only within its own scopes; this key lacks "transfer"; ferry whoami/,
    );
    const within = json<{ scopes: string[] }>(
      await asAdmin('keys', 'create', 'looker', '--scope', 'read', '--json'),
    );
    assert.deepEqual(within.scopes, ['read']);
    const inherits = json<{ scopes: string[] }>(await asAdmin('keys', 'create', 'same', '--json'));
    assert.deepEqual(inherits.scopes, ['read', 'admin'], "without --scope: the creating key's own");

    // A key that cannot list locations still logs in and shows itself (GET /v1/key needs no scope).
    const sharer = json<{ token: string }>(
      await run('keys', 'create', 'sharer', '--scope', 'share', '--json'),
    );
    const config = { XDG_CONFIG_HOME: join(s.home, unique('cfg')) };
    ok(await ferry(['login', '--url', s.url], { env: config, stdin: `${sharer.token}\n` }));
    assert.match(ok(await ferry(['whoami'], { env: config })).stdout, /^scopes: {4}share$/m);
    assert.match((await ferry(['ls'], { env: config })).stderr, LACKS('read'));

    const listed = ok(await run('keys')).stdout;
    assert.match(listed, /^ID\s+NAME\s+STATE\s+SCOPES\s+LOCATIONS\s+CREATED/);
    assert.match(listed, /^\S+\s+cli test\s+active\s+all\s/m);
    assert.match(listed, /^\S+\s+reader\s+active\s+read\s/m);
    assert.match(listed, /^\S+\s+keeper\s+active\s+read,admin\s/m);
  });

  test('scopes: the operator door makes a scoped key; keys ls and whoami show it; a bad word is a usage error', async () => {
    const { name, run, env } = await s.workspace();
    const server = s.serverEnv();
    const local = (...args: string[]) =>
      ferry(['keys', 'create', ...args, '--workspace', name], { env: server });

    const made = json<{ id: string; token: string; scopes: string[]; workspace: string }>(
      await local('scoped', '--scope', 'read,transfer', '--json'),
    );
    assert.equal(made.workspace, name);
    assert.deepEqual(made.scopes, ['read', 'transfer']);

    const listed = ok(await run('keys', 'ls')).stdout;
    assert.match(listed, new RegExp(`^${made.id}\\s+scoped\\s+active\\s+read,transfer\\s`, 'm'));
    const items = json<Array<{ id: string; scopes: string[] }>>(await run('keys', '--json'));
    assert.deepEqual(items.find((k) => k.id === made.id)?.scopes, ['read', 'transfer']);
    assert.deepEqual(items.find((k) => k.id !== made.id)?.scopes, [
      'read',
      'transfer',
      'remove',
      'share',
      'admin',
    ]);

    const asScoped = { env: { ...env, FERRY_API_KEY: made.token } };
    const who = ok(await ferry(['whoami'], asScoped)).stdout;
    assert.match(who, new RegExp(`^key: {7}"scoped" ${made.id}, from FERRY_API_KEY, accepted$`, 'm'));
    assert.match(who, /^scopes: {4}read, transfer$/m);
    const whoJson = json<{ key: { id: string; scopes: string[] } }>(
      await ferry(['whoami', '--json'], asScoped),
    );
    assert.deepEqual(
      { id: whoJson.key.id, scopes: whoJson.key.scopes },
      { id: made.id, scopes: ['read', 'transfer'] },
    );

    const badScope = await local('bad', '--scope', 'rea');
    assert.equal(badScope.code, 2);
    assert.match(badScope.stderr, /^ferry: --scope: "rea" is not a scope/);
    const names = json<Array<{ name: string }>>(await run('keys', '--json')).map((k) => k.name);
    assert.deepEqual(names, ['cli test', 'scoped'], 'the refused ones made no key');
  });

  test('locations: a key made with --location (a label or an id, on both doors) sees and addresses only those; another is not found (exit 3); keys and whoami show them', async () => {
    const { name, run, env } = await s.workspace();
    const mine = await s.location(run);
    const theirs = await s.location(run);
    const bucket = await seedBucket(s.client, { 'a.txt': 'a' });
    const made = json<{ id: string; token: string; locations: string[] }>(
      await run('keys', 'create', 'nightly', '--location', mine, '--json'),
    );
    assert.equal(made.locations.length, 1);
    const asLimited = (...args: string[]) => ferry(args, { env: { ...env, FERRY_API_KEY: made.token } });
    const seen = ok(await asLimited('ls')).stdout;
    assert.match(seen, new RegExp(`^${mine}\\s`, 'm'));
    assert.doesNotMatch(seen, new RegExp(theirs));
    ok(await asLimited('ls', `${mine}:${bucket}`));
    const other = await asLimited('ls', `${theirs}:${bucket}`);
    assert.equal(other.code, 3, other.stderr);
    assert.match(other.stderr, new RegExp(`no location is named "${theirs}"`));
    const copy = await asLimited('cp', `${mine}:${bucket}/a.txt`, `${theirs}:${bucket}/b.txt`);
    assert.equal(copy.code, 3, copy.stderr);
    assert.match(ok(await asLimited('whoami')).stdout, new RegExp(`^locations: ${mine}$`, 'm'));
    assert.match(ok(await run('whoami')).stdout, /^locations: all$/m);
    assert.match(
      ok(await run('keys')).stdout,
      new RegExp(`^${made.id}\\s+nightly\\s+active\\s+all\\s+${mine}\\s`, 'm'),
    );
    // Only within its own, and a label that names nothing is not found.
    const beyond = await asLimited('keys', 'create', 'wider', '--location', theirs);
    assert.equal(beyond.code, 3, beyond.stderr);
    assert.match(beyond.stderr, new RegExp(`--location: no location is named "${theirs}"`));
    const nothing = await run('keys', 'create', 'x', '--location', 'nowhere');
    assert.equal(nothing.code, 3, nothing.stderr);
    // The operator's door takes labels too.
    const local = json<{ locations: string[] }>(
      await ferry(['keys', 'create', 'door', '--location', theirs, '--workspace', name, '--json'], {
        env: s.serverEnv(),
      }),
    );
    assert.equal(local.locations.length, 1);
    assert.notEqual(local.locations[0], made.locations[0]);
  });
});
