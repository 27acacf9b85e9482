// The other events on both databases, each queued by the move it reports and delivered to a local
// receiver by a deliverer stepped by hand: a canceled bulk copy (job.canceled), a send whose mail went
// out (send.sent, through a real SMTP server), and a location a provider's rejection made failed
// (location.status_changed, through Locations.markFailed, which the storage layer calls on a rejection).
// An event nobody subscribed to queues nothing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { Registry } from 'prom-client';
import { SendDispatcher } from '../../src/domain/sends/dispatcher.js';
import { WebhookDeliverer } from '../../src/domain/webhooks/deliverer.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { TestSmtp } from '../support/smtp.js';
import { createLocation, newWorkspace, s3Client, seedBucket } from '../support/transfers.js';
import { Receiver } from './receiver.js';

await eachDatabase('webhook events', (database) => {
  const clock = new ManualClock(Date.now());
  let t: TestApp;
  let s3: S3rverHandle;
  let smtp: TestSmtp;
  let client: S3Client;
  let receiver: Receiver;
  let deliverer: WebhookDeliverer;

  before(async () => {
    [s3, smtp, receiver] = await Promise.all([startS3rver(), new TestSmtp().start(), new Receiver().start()]);
    client = s3Client(s3.endpoint);
    t = await startTestApp(database, {
      clock,
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_SMTP_URL: smtp.url },
    });
    deliverer = new WebhookDeliverer(
      {
        db: t.services.db,
        clock,
        logger: t.services.logger,
        keyring: t.services.keyring,
        egress: t.services.stores.egress,
        owner: unique('test-deliverer'),
        registry: new Registry(),
      },
      { pollMs: 3_600_000, timeoutMs: 5000 },
    );
  });
  after(async () => {
    await t?.close();
    client?.destroy();
    await Promise.all([s3?.close(), smtp?.close(), receiver?.close()]);
  });

  async function setup(events: string[]) {
    const call = await newWorkspace(t);
    const loc = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKIDEV', secret_access_key: 'events-secret' },
      metadata: { endpoint: s3.endpoint },
    });
    const res = await call({ method: 'POST', url: '/v1/webhooks', payload: { url: receiver.url, events } });
    assert.equal(res.statusCode, 201, res.body);
    return { call, loc, secret: res.json().secret as string };
  }

  /** Delivers what is due and answers the one new request, verified. */
  async function next(secret: string) {
    const before = receiver.received.length;
    await deliverer.tick();
    assert.equal(receiver.received.length, before + 1, 'one delivery');
    const request = receiver.received.at(-1);
    assert.ok(request);
    return receiver.verify(request, secret);
  }

  const queued = async () =>
    Number(
      (
        await t.services.db.kysely
          .selectFrom('webhook_messages')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  test('a canceled bulk copy is delivered as job.canceled', async () => {
    const { call, loc, secret } = await setup(['job.canceled']);
    const bucket = await seedBucket(client, { 'in/a': 'a' });
    const res = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${loc.id}:${bucket}/in/`, to: `${loc.id}:${bucket}/out/` },
    });
    const jobId = res.json().job_id as string;
    const canceled = await call({ method: 'POST', url: `/v1/jobs/${jobId}/cancel` });
    assert.equal(canceled.statusCode, 202, canceled.body);
    const event = await next(secret);
    assert.equal(event.type, 'job.canceled');
    assert.equal(event.data.job_id, jobId);
    assert.equal(event.data.status, 'canceled');
  });

  test('a send whose mail went out is delivered as send.sent', async () => {
    const { call, loc, secret } = await setup(['send.sent', 'send.failed']);
    const bucket = await seedBucket(client, { 'report.txt': 'numbers' });
    const res = await call({
      method: 'POST',
      url: '/send',
      payload: { source: `${loc.label}/${bucket}/report.txt`, to: 'ann@example.com' },
    });
    assert.equal(res.statusCode, 202, res.body);
    const mailer = t.services.mailer;
    assert.ok(mailer);
    const dispatcher = new SendDispatcher({
      db: t.services.db,
      clock,
      logger: t.services.logger,
      shares: t.services.shares,
      mailer,
      owner: unique('test-dispatcher'),
      from: t.config.mail.from,
      registry: new Registry(),
    });
    await dispatcher.tick();
    const event = await next(secret);
    assert.equal(event.type, 'send.sent');
    assert.deepEqual(event.data, (await call({ method: 'GET', url: `/v1/sends/${res.json().id}` })).json());
  });

  test('a location made failed is delivered as location.status_changed with both statuses and the reason', async () => {
    const { loc, secret } = await setup(['location.status_changed']);
    await t.services.locations.markFailed(loc.id, 'the access key was deleted');
    const event = await next(secret);
    assert.equal(event.type, 'location.status_changed');
    assert.deepEqual(event.data, {
      id: loc.id,
      name: loc.label,
      provider: 's3',
      status: 'failed',
      previous_status: 'active',
      reason: 'the access key was deleted',
    });
    const before = await queued();
    await t.services.locations.markFailed(loc.id, 'again');
    assert.equal(await queued(), before, 'a location already failed has not changed status');
  });

  test('an event no endpoint subscribed to queues nothing', async () => {
    const { call, loc } = await setup(['share.downloaded']);
    const before = await queued();
    await t.services.locations.markFailed(loc.id, 'rejected');
    const bucket = await seedBucket(client, { 'in/a': 'a' });
    const res = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${loc.id}:${bucket}/in/`, to: `${loc.id}:${bucket}/out/` },
    });
    await call({ method: 'POST', url: `/v1/jobs/${res.json().job_id}/cancel` });
    assert.equal(await queued(), before);
  });
});
