// `ferry` as an API client (docs/cli.md), run as a real process against a ferry service in this
// process, on both databases (one test a file, to stay well inside the per-file time limit
// on a loaded machine): jobs watch of a job that ends partial exits 6 and shows the failure.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { eachDatabase, unique } from '../support/fixtures.js';
import { seedBucket } from '../support/transfers.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry client', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('jobs watch of a job that ends partial exits 6 and shows the failure; retry plans it again; cancel of a finished job exits 4', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const src = await seedBucket(s.client, { 'p/a.txt': 'a' });
    const dst = await seedBucket(s.client, {});
    const manifest = join(s.home, unique('manifest'));
    writeFileSync(manifest, 'a.txt\nmissing.txt\n');
    const job = json(
      await run('cp', `${label}:${src}/p/`, `${label}:${dst}/p/`, '--manifest', manifest, '--json'),
    );
    const watched = await run('jobs', 'watch', String(job.job_id), '--interval', '0.1', '--json');
    assert.equal(watched.code, 6, watched.stderr);
    assert.equal(JSON.parse(watched.stdout).status, 'partial');
    assert.match(watched.stderr, /^ferry: ended partial/m);
    const shown = ok(await run('jobs', 'show', String(job.job_id))).stdout;
    assert.match(shown, /^failures:\nKEY\s+ATTEMPTS\s+ERROR\nmissing\.txt\s+\d+\s+\S/m);
    assert.deepEqual(json(await run('jobs', 'retry', String(job.job_id), '--json')), {
      job_id: job.job_id,
      status: 'planning',
    });
    assert.equal((await run('jobs', 'watch', String(job.job_id), '--interval', '0.1')).code, 6);
    const cancel = await run('jobs', 'cancel', String(job.job_id));
    assert.equal(cancel.code, 4, cancel.stderr);
  });
});
