// `ferry` as an API client (docs/cli.md), run as a real process against a ferry service in this
// process, on both databases (one test a file, to stay well inside the per-file time limit
// on a loaded machine): login checks the key and saves it in a 0600 file in a 0700 directory.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { eachDatabase, unique } from '../support/fixtures.js';
import { ferry } from './run.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry client', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

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
    assert.match(login.stdout, /^logged in to \S+ with the key "cli test"; saved in /);
    const who = json<Record<string, unknown> & { key: Record<string, unknown> }>(
      await ferry(['whoami', '--json'], { env }),
    );
    assert.deepEqual(who, {
      url: s.url,
      url_from: 'config file',
      key_from: 'config file',
      key_valid: true,
      key: {
        id: who.key.id,
        name: 'cli test',
        created_at: who.key.created_at,
        last_used_at: who.key.last_used_at,
        scopes: ['read', 'transfer', 'remove', 'share', 'admin'],
      },
    });
    ok(await ferry(['ls'], { env }));
    ok(await ferry(['logout'], { env }));
    assert.throws(() => statSync(file), /ENOENT/);
    assert.equal((await ferry(['ls'], { env })).code, 5);
  });
});
