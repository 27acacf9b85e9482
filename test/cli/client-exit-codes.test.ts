// `ferry` as an API client (docs/cli.md), run as a real process against a ferry service in this
// process, on both databases (one test a file, to stay well inside the per-file time limit
// on a loaded machine): exit codes.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { eachDatabase, unique } from '../support/fixtures.js';
import { closedPort } from '../support/processes.js';
import { ferry } from './run.js';
import { ok, type Service, startService } from './service.js';

await eachDatabase('ferry client', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('exit codes: 2 usage, 3 not found, 4 conflict (the candidates listed), 5 no key or a wrong one, 1 unreachable or an address the server may not reach (FERRY_EGRESS_ALLOW named)', async () => {
    const { run, env } = await s.workspace();
    const usage = await run('cp', 'only-one');
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /^ferry: Not enough non-option arguments/);
    assert.equal((await run('ls', '--bogus')).code, 2);
    const invalid = await run('cp', 'nowhere:b/k', 'nowhere:b/k2', '--overwrite', 'if-missing');
    assert.equal(invalid.code, 2, 'the server refuses overwrite on a single copy (400)');
    const missing = await run('ls', 'nosuch:bucket');
    assert.equal(missing.code, 3);
    assert.match(missing.stderr, /^ferry: no location is named "nosuch"/);
    assert.equal((await run('jobs', 'show', '00000000-0000-4000-8000-000000000000')).code, 3);
    const label = await s.location(run);
    await s.location(run, label);
    const ambiguous = await run('ls', label);
    assert.equal(ambiguous.code, 4);
    assert.match(ambiguous.stderr, /matches 2 locations/);
    assert.equal(ambiguous.stderr.match(/^ {2}[0-9a-f-]{36} {2}s3 {2}created /gm)?.length, 2);
    const nokey = await ferry(['ls'], {
      env: { FERRY_URL: s.url, XDG_CONFIG_HOME: env.XDG_CONFIG_HOME as string },
    });
    assert.equal(nokey.code, 5);
    assert.equal(nokey.stderr, 'ferry: no API key: set FERRY_API_KEY or run ferry login\n');
    const wrongKey = `fry_${'x'.repeat(43)}`;
    const wrong = await ferry(['ls'], { env: { ...env, FERRY_API_KEY: wrongKey } });
    assert.equal(wrong.code, 5);
    assert.ok(!wrong.stderr.includes(wrongKey));
    // An endpoint on a private address: the server's FERRY_EGRESS_ALLOW decides, not the command line.
    const secret = join(s.home, unique('secret'));
    writeFileSync(secret, JSON.stringify({ access_key_id: 'AKID', secret_access_key: 'SAK' }));
    const privateLabel = unique('private');
    const create = ['--provider', 's3', '--label', privateLabel, '--secret-file', secret];
    ok(await run('locations', 'create', ...create, '--endpoint', 'http://10.255.0.1:9000'));
    const egress = await run('ls', `${privateLabel}:bucket`);
    assert.equal(egress.code, 1, egress.stderr);
    assert.match(
      egress.stderr,
      /^ferry: .*egress to 10\.255\.0\.1 \(10\.255\.0\.1\) is not allowed: .*; FERRY_EGRESS_ALLOW is a setting of the ferry server, not of this command: its operator adds the host or its address/m,
    );
    const closed = await closedPort();
    const down = await ferry(['ls'], { env: { ...env, FERRY_URL: `http://127.0.0.1:${closed}` } });
    assert.equal(down.code, 1);
    assert.match(
      down.stderr,
      /^ferry: cannot reach ferry at http:\/\/127\.0\.0\.1:\d+ \(FERRY_URL\): ECONNREFUSED/,
    );
  });
});
