// Job cancel and retry through HTTP (docs/api.md, "Polling"), on both databases, each with one expected
// answer: the job is held mid-object by the fault proxy in front of s3rver, so it is certainly running
// when it is canceled, and certainly finished when a finished job is canceled. The worker runs one
// object at a time, and its heartbeat (which also looks for canceled jobs) is twenty minutes away, so
// only the cancel itself can stop the running object. Single transfers have no cancel (docs/api.md
// lists cancel for jobs only).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { startTestApp, type TestApp } from '../support/app.js';
import { deferred } from '../support/deferred.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { eachDatabase } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import {
  type Call,
  createLocation,
  newWorkspace,
  readS3,
  s3Client,
  seedBucket,
  waitFor,
} from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

const HOUR = 3_600_000;
// Relative to the copied prefix `in/`, as the job's objects name them.
const KEYS = ['a.bin', 'b.bin', 'c.bin'];

await eachDatabase('job cancel', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let proxy: FaultProxy;
  before(async () => {
    s3 = await startS3rver();
    client = s3Client(s3.endpoint);
    proxy = await startFaultProxy(s3.endpoint);
    t = await startTestApp(database, {
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' },
      worker: { concurrency: 1, leaseMs: HOUR },
    });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await proxy.close();
    await s3.close();
  });

  interface Running {
    call: Call;
    jobId: string;
    bucket: string;
    /** The location on the destination account, for copies that do not touch the proxy. */
    dst: string;
    /** The key of the object the proxy holds. */
    heldKey: string;
    /** Requests the proxy saw for this job. */
    seen(): Array<{ method: string; url: string }>;
    /** Lets the held read go on (the proxy then cuts it). */
    release(): void;
  }

  const objectRows = (jobId: string) =>
    t.services.db.kysely
      .selectFrom('job_objects')
      .select(['key', 'status', 'attempts', 'lease_owner', 'run_after'])
      .where('job_id', '=', jobId)
      .orderBy('key')
      .execute();

  /**
   * A prefix copy of three objects whose source is read through the proxy (two accounts, so every
   * object streams through the worker): the listing passes and the first object's GET stops after its
   * first bytes until `release`. Resolves once that object is running.
   */
  async function runningJob(): Promise<Running> {
    const call = await newWorkspace(t);
    const src = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'READER', secret_access_key: 'secret' },
      metadata: { endpoint: proxy.url },
    });
    const dst = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'WRITER', secret_access_key: 'secret' },
      metadata: { endpoint: s3.endpoint },
    });
    const bucket = await seedBucket(
      client,
      Object.fromEntries(KEYS.map((k, i) => [`in/${k}`, Buffer.alloc(256 * 1024, i + 1)])),
    );
    const gate = deferred();
    proxy.reset();
    const from = proxy.seen.length;
    proxy.passNext(1);
    proxy.dropNext(1, gate.promise);
    const res = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${src.id}:${bucket}/in/`, to: `${dst.id}:${bucket}/out/` },
    });
    assert.equal(res.statusCode, 202, res.body);
    const jobId = res.json().job_id as string;
    const seen = () => proxy.seen.slice(from);
    // The object's GET has reached the proxy, so it is held; the row says which object it is.
    await waitUntil(() => seen().length === 2, {
      what: 'the listing and the held GET',
      detail: () => JSON.stringify(seen()),
    });
    const held = await waitUntil(
      async () =>
        (await objectRows(jobId)).find(
          (r) => r.status === 'running' && seen()[1]?.url.includes(`/in/${r.key}`),
        ),
      { what: 'the held object to run' },
    );
    return { call, jobId, bucket, dst: dst.id, heldKey: held.key, seen, release: gate.resolve };
  }

  test('cancel of a running job answers 202; the running object stops, the others never start, the job ends canceled', async () => {
    const job = await runningJob();
    try {
      const before = await job.call({ method: 'GET', url: `/v1/jobs/${job.jobId}` });
      assert.equal(before.json().status, 'running', before.body);

      const canceled = await job.call({ method: 'POST', url: `/v1/jobs/${job.jobId}/cancel` });
      assert.equal(canceled.statusCode, 202, canceled.body);
      assert.deepEqual(canceled.json(), { job_id: job.jobId, status: 'canceled' });

      // The worker runs one object at a time: a single copy accepted now can only run once the held
      // object has stopped (its read is still held), and once it has run, the worker was free to take
      // the job's other objects, had they been claimable.
      const single = await job.call({
        method: 'POST',
        url: '/v1/copy',
        payload: { from: `${job.dst}:${job.bucket}/in/a.bin`, to: `${job.dst}:${job.bucket}/single/a.bin` },
      });
      assert.equal(single.statusCode, 202, single.body);
      const copied = await waitFor(job.call, `/v1/transfers/${single.json().id}`);
      assert.equal(copied.status, 'complete', JSON.stringify(copied));

      const view = await waitFor(job.call, `/v1/jobs/${job.jobId}`);
      assert.equal(view.status, 'canceled', JSON.stringify(view));
      assert.deepEqual(view.counts, {
        total: 3,
        pending: 3,
        succeeded: 0,
        skipped: 0,
        failed: 0,
        deleted: 0,
        size_only: 0,
      });
      assert.equal(view.bytes_done, 0);

      const rows = await objectRows(job.jobId);
      assert.deepEqual(
        rows.map((r) => [r.key, r.status, r.lease_owner]),
        KEYS.map((k) => [k, 'pending', null]),
        'every object parked, none leased',
      );
      for (const row of rows) {
        assert.ok(Number(row.run_after) > Date.now() + 100 * 365 * 24 * HOUR, `${row.key} is never due`);
      }
      assert.equal(rows.find((r) => r.key === job.heldKey)?.attempts, 1, 'the held object ran once');
      // The others were never read from the source, and nothing reached the destination.
      assert.deepEqual(
        job.seen().filter((r) => KEYS.some((k) => k !== job.heldKey && r.url.includes(`/in/${k}`))),
        [],
      );
      assert.equal(job.seen().length, 2, 'the proxy saw only the listing and the held GET');
      for (const key of KEYS) {
        assert.equal(await readS3(client, job.bucket, `out/${key}`), undefined, key);
      }
    } finally {
      job.release();
    }
  });

  test('retry of a canceled job answers 409 with the reason; the job stays canceled and nothing runs', async () => {
    const job = await runningJob();
    try {
      const canceled = await job.call({ method: 'POST', url: `/v1/jobs/${job.jobId}/cancel` });
      assert.equal(canceled.statusCode, 202, canceled.body);
      await waitUntil(async () => (await objectRows(job.jobId)).every((r) => r.lease_owner === null), {
        what: 'the worker to stop the held object',
      });
      const parked = await objectRows(job.jobId);

      const retry = await job.call({ method: 'POST', url: `/v1/jobs/${job.jobId}/retry` });
      assert.equal(retry.statusCode, 409, retry.body);
      assert.deepEqual(retry.json(), {
        error: 409,
        message: `job ${job.jobId} is canceled; only partial or failed jobs can be retried`,
      });
      const again = await job.call({ method: 'POST', url: `/v1/jobs/${job.jobId}/cancel` });
      assert.equal(again.statusCode, 409, again.body);
      assert.deepEqual(again.json(), {
        error: 409,
        message: `job ${job.jobId} is canceled; only a job that has not finished can be canceled`,
      });

      // A single copy runs to the end on the one-slot worker: had the retry made the job's objects
      // claimable, the worker would have been free to take them.
      const single = await job.call({
        method: 'POST',
        url: '/v1/copy',
        payload: { from: `${job.dst}:${job.bucket}/in/b.bin`, to: `${job.dst}:${job.bucket}/single/b.bin` },
      });
      assert.equal((await waitFor(job.call, `/v1/transfers/${single.json().id}`)).status, 'complete');
      const view = await job.call({ method: 'GET', url: `/v1/jobs/${job.jobId}` });
      assert.equal(view.json().status, 'canceled', view.body);
      assert.deepEqual(await objectRows(job.jobId), parked, 'the objects are as the cancel left them');
      assert.equal(job.seen().length, 2, 'nothing more was read from the source');
    } finally {
      job.release();
    }
  });

  test('cancel of a finished job answers 409 with the reason and leaves it complete', async () => {
    const call = await newWorkspace(t);
    const secret = { access_key_id: 'SAME', secret_access_key: 'secret' };
    const a = await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } });
    const bucket = await seedBucket(client, { 'p/x.txt': 'x' });
    const res = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${a.id}:${bucket}/p/`, to: `${a.id}:${bucket}/q/` },
    });
    assert.equal(res.statusCode, 202, res.body);
    const jobId = res.json().job_id as string;
    const done = await waitFor(call, `/v1/jobs/${jobId}`);
    assert.equal(done.status, 'complete', JSON.stringify(done));

    // No body and an empty object are the same request (docs/api.md, "Polling").
    for (const payload of [undefined, {}]) {
      const canceled = await call({
        method: 'POST',
        url: `/v1/jobs/${jobId}/cancel`,
        ...(payload ? { payload } : {}),
      });
      assert.equal(canceled.statusCode, 409, canceled.body);
      assert.deepEqual(canceled.json(), {
        error: 409,
        message: `job ${jobId} is complete; only a job that has not finished can be canceled`,
      });
    }
    const view = await call({ method: 'GET', url: `/v1/jobs/${jobId}` });
    assert.equal(view.json().status, 'complete');
    assert.deepEqual(view.json().counts, {
      total: 1,
      pending: 0,
      succeeded: 1,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(String(await readS3(client, bucket, 'q/x.txt')), 'x');
  });
});
