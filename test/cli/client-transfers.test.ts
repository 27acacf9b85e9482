// `ferry transfers` and `ferry jobs` (docs/cli.md) as a real process against a ferry service in this
// process, on both databases: the lists say what each transfer and job is (from → to, with location
// labels rather than ids), its sizes and object counts, and `transfers show` lists what failed.
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

  test('transfers and jobs show from → to with labels, counts and failures', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const bucket = await seedBucket(s.client, { 'p/a.txt': 'a' });
    const pulled = json(
      await run('pull', `${s.origin}/file`, `${s.origin}/missing`, `${label}:${bucket}/in/`, '--json'),
    );
    const watched = await run('transfers', 'watch', String(pulled.id), '--interval', '0.1', '--json');
    assert.equal(watched.code, 6, watched.stderr);
    assert.equal(JSON.parse(watched.stdout).error, '1 of 2 objects failed');
    const listed = ok(await run('transfers')).stdout;
    assert.match(listed, /FROM → TO\s+OBJECTS\s+BYTES/);
    assert.match(
      listed,
      new RegExp(
        `pull\\s+failed\\s+\\S+/file \\(\\+1 more\\) → ${label}/${bucket}/in/\\s+2/2 \\(1 failed\\)`,
      ),
    );
    const shown = ok(await run('transfers', 'show', String(pulled.id))).stdout;
    assert.match(shown, /^objects:\s+2 total, 1 done, 0 skipped, 1 failed, 0 pending$/m);
    assert.match(shown, /^failures:\nKEY\s+ATTEMPTS\s+ERROR\n\S+\/missing\s+\d+\s+\S/m);

    const dst = await seedBucket(s.client, {});
    const job = json(await run('cp', `${label}:${bucket}/p/`, `${label}:${dst}/p/`, '--json'));
    ok(await run('jobs', 'watch', String(job.job_id), '--interval', '0.1'));
    const jobs = ok(await run('jobs')).stdout;
    assert.match(jobs, new RegExp(`complete\\s+${label}:${bucket}/p/ → ${label}:${dst}/p/\\s+1/1`));
    const jobShown = ok(await run('jobs', 'show', String(job.job_id))).stdout;
    assert.match(jobShown, new RegExp(`^from:\\s+${label}:${bucket}/p/$`, 'm'));
  });
});
