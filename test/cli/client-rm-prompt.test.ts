// `ferry` as an API client (docs/cli.md), run as a real process against a ferry service in this
// process, on both databases (one test a file, to stay well inside the per-file time limit
// on a loaded machine): rm on a terminal shows the files and asks.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../support/fixtures.js';
import { readS3, seedBucket } from '../support/transfers.js';
import { ferry } from './run.js';
import { type Service, startService } from './service.js';

await eachDatabase('ferry client', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('rm on a terminal shows the files and asks: n removes nothing, y removes them', async () => {
    const { env } = await s.workspace();
    const label = await s.location((...args) => ferry(args, { env }));
    const bucket = await seedBucket(s.client, { 'gone.txt': 'x' });
    const no = await ferry(['rm', `${label}:${bucket}/gone.txt`], { env, tty: true, stdin: 'n\r' });
    assert.equal(no.code, 0, no.stdout);
    assert.match(no.stdout, new RegExp(`${bucket}/gone\\.txt`));
    assert.match(no.stdout, /remove 1 file, 1 B\? This cannot be undone\. \[y\/N\]/);
    assert.match(no.stdout, /nothing removed/);
    assert.equal((await readS3(s.client, bucket, 'gone.txt'))?.toString(), 'x');
    const yes = await ferry(['rm', `${label}:${bucket}/gone.txt`, '--watch'], {
      env,
      tty: true,
      stdin: 'y\r',
    });
    assert.equal(yes.code, 0, yes.stdout);
    assert.equal(await readS3(s.client, bucket, 'gone.txt'), undefined);
  });
});
