// Webhook delivery end to end on both databases: a worker runs real copies on s3rver, and the events
// of their ends reach a local receiver, signed so that the standardwebhooks package (an independent
// implementation of the specification) accepts them, with the type and data the API shows for the
// transfer or job. The deliverer's poll is an hour, so each delivery shows the wake-up works: on
// PostgreSQL the NOTIFY that the outbox trigger sends at commit, on SQLite the in-process signal.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import {
  type Call,
  createLocation,
  newWorkspace,
  s3Client,
  seedBucket,
  waitFor,
} from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';
import { Receiver } from './receiver.js';

await eachDatabase('webhook delivery', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let receiver: Receiver;

  before(async () => {
    [s3, receiver] = await Promise.all([startS3rver(), new Receiver().start()]);
    client = s3Client(s3.endpoint);
    t = await startTestApp(database, {
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' },
      worker: true,
      webhooks: { pollMs: 3_600_000 },
    });
  });
  after(async () => {
    await t?.close();
    client?.destroy();
    await Promise.all([s3?.close(), receiver?.close()]);
  });

  async function setup(events: string[]): Promise<{ call: Call; loc: string; secret: string; hook: string }> {
    const call = await newWorkspace(t);
    const loc = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKIDHOOK', secret_access_key: 'hook-secret' },
      metadata: { endpoint: s3.endpoint },
    });
    const res = await call({ method: 'POST', url: '/v1/webhooks', payload: { url: receiver.url, events } });
    assert.equal(res.statusCode, 201, res.body);
    return { call, loc: loc.id, secret: res.json().secret, hook: res.json().id };
  }

  /** The one request whose data names `id`, verified. */
  async function deliveryOf(secret: string, id: string) {
    const requests = await waitUntil(
      () => {
        const all = receiver.received.filter((r) => r.body.includes(id));
        return all.length > 0 ? all : undefined;
      },
      { what: `a delivery about ${id}`, detail: () => t.logs.text.split('\n').slice(-20).join('\n') },
    );
    assert.equal(requests.length, 1, 'one request per event');
    const request = requests[0];
    assert.ok(request);
    assert.equal(request.headers['content-type'], 'application/json');
    return receiver.verify(request, secret);
  }

  test('a transfer that ends is delivered as transfer.complete with the transfer as GET shows it', async () => {
    const { call, loc, secret, hook } = await setup(['transfer.complete', 'transfer.failed']);
    const bucket = await seedBucket(client, { 'a.bin': randomBytes(1000) });
    const res = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${loc}:${bucket}/a.bin`, to: `${loc}:${bucket}/b.bin` },
    });
    assert.equal(res.statusCode, 202, res.body);
    const id = res.json().id as string;
    const done = await waitFor(call, `/v1/transfers/${id}`);
    const event = await deliveryOf(secret, id);
    assert.equal(event.type, 'transfer.complete');
    assert.deepEqual(event.data, done);
    assert.equal(event.timestamp, done.finished_at);

    const log = await waitUntil(
      async () => {
        const page = (await call({ method: 'GET', url: `/v1/webhooks/${hook}/deliveries` })).json();
        return page.deliveries.length > 0 ? page : undefined;
      },
      { what: 'the delivery in the log' },
    );
    assert.equal(log.deliveries.length, 1);
    const [entry] = log.deliveries;
    assert.equal(entry.event_id, event.id);
    assert.equal(entry.type, 'transfer.complete');
    assert.equal(entry.attempt, 1);
    assert.equal(entry.status_code, 204);
    assert.equal(typeof entry.duration_ms, 'number');
  });

  test('a transfer that fails is delivered as transfer.failed with its error', async () => {
    const { call, loc, secret } = await setup(['transfer.failed']);
    const bucket = await seedBucket(client, {});
    const res = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${loc}:${bucket}/missing.bin`, to: `${loc}:${bucket}/b.bin` },
    });
    const id = res.json().id as string;
    const done = await waitFor(call, `/v1/transfers/${id}`);
    assert.equal(done.status, 'failed');
    const event = await deliveryOf(secret, id);
    assert.equal(event.type, 'transfer.failed');
    assert.deepEqual(event.data, done);
  });

  test('a transfer over several objects is delivered as transfer.complete with its counts, as GET shows it', async () => {
    const { call, loc, secret } = await setup(['transfer.complete']);
    const bucket = await seedBucket(client, { 'm/a': 'a', 'm/b': 'bb' });
    const res = await call({
      method: 'POST',
      url: '/move',
      payload: { from: `${loc}/${bucket}/m/*`, to: `${loc}/${bucket}/n/` },
    });
    assert.equal(res.statusCode, 202, res.body);
    const id = res.json().id as string;
    const done = await waitFor(call, `/v1/transfers/${id}`);
    assert.deepEqual(done.counts, {
      total: 2,
      pending: 0,
      succeeded: 2,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    const event = await deliveryOf(secret, id);
    assert.equal(event.type, 'transfer.complete');
    assert.deepEqual(event.data, done);
  });

  test('a bulk copy that ends is delivered as job.complete with its counts; unsubscribed events are not', async () => {
    const { call, loc, secret } = await setup(['job.complete', 'job.partial', 'job.failed']);
    const bucket = await seedBucket(client, { 'in/a': 'a', 'in/b': 'bb', 'in/c': 'ccc' });
    const res = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${loc}:${bucket}/in/`, to: `${loc}:${bucket}/out/` },
    });
    assert.equal(res.statusCode, 202, res.body);
    const jobId = res.json().job_id as string;
    const done = await waitFor(call, `/v1/jobs/${jobId}`);
    assert.equal(done.status, 'complete');
    const event = await deliveryOf(secret, jobId);
    assert.equal(event.type, 'job.complete');
    const { updated_at: _u, started_at: _s, ...expected } = done;
    assert.deepEqual(event.data, expected);
    assert.deepEqual(event.data.counts, {
      total: 3,
      pending: 0,
      succeeded: 3,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    // The job's objects ran as transfers of no kind of their own: nothing else was sent about them.
    assert.equal(receiver.received.filter((r) => r.body.includes(bucket)).length, 1);
  });
});
