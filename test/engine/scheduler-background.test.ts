// The scheduler as `ferry serve` runs it (src/background.ts), on both databases: nobody calls it; when a
// schedule's time comes (an injected clock) and the schedulers are woken, it starts the run's job, which
// the worker copies for real (s3rver), and the job carries the schedule's id.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { createLocation, newWorkspace, readS3, s3Client, seedBucket, waitFor } from '../support/transfers.js';
import { HANG_MS } from '../support/wait.js';

await eachDatabase('scheduler in the background', (database) => {
  const clock = new ManualClock(Date.parse('2027-01-10T10:15:00Z'));
  let t: TestApp;
  let s3: S3rverHandle;
  before(async () => {
    s3 = await startS3rver();
    t = await startTestApp(database, { clock, env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' }, worker: true });
  });
  after(async () => {
    await t.close();
    await s3.close();
  });

  test('a due schedule starts its job with no one calling it, and the worker copies the objects', async () => {
    const client = s3Client(s3.endpoint);
    try {
      const call = await newWorkspace(t);
      const secret = { access_key_id: 'AKIDSAME', secret_access_key: 'same-secret' };
      const a = await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } });
      const src = await seedBucket(client, { 'in/x.txt': 'hourly' });
      const dst = await seedBucket(client, {});
      const res = await call({
        method: 'POST',
        url: '/v1/schedules',
        payload: {
          name: 'hourly',
          every: 'every hour',
          action: { copy: { from: `${a.label}:${src}/in/`, to: `${a.label}:${dst}/out/` } },
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      const { id, next_run_at } = res.json();
      clock.set(Date.parse(next_run_at));
      t.services.schedulesChanged();
      const schedule = await waitFor(
        call,
        `/v1/schedules/${id}`,
        (b) => b.last_job_id !== undefined,
        HANG_MS,
      );
      const job = await waitFor(call, `/v1/jobs/${schedule.last_job_id}`);
      assert.equal(job.status, 'complete');
      assert.equal(job.schedule_id, id);
      assert.equal((await readS3(client, dst, 'out/x.txt'))?.toString(), 'hourly');
    } finally {
      client.destroy();
    }
  });
});
