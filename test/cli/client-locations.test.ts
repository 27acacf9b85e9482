// `ferry` as an API client (docs/cli.md), run as a real process against a ferry service in this
// process, on both databases (one test a file, to stay well inside the per-file time limit
// on a loaded machine): locations.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase, unique } from '../support/fixtures.js';
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
    assert.equal(
      ok(await run('locations', 'refresh', label)).stdout,
      `${label} (s3) holds credentials that do not expire: there is nothing to refresh\n`,
    );
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
});
