// The transfer engine while an OAuth location changes under it, on both databases: a bulk copy from
// the Dropbox fake to s3rver keeps every object while the location is renamed, refreshed, has its
// access token ended by the provider in the middle of the job, and is given a new secret.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { Refresher } from '../../src/domain/refresher/refresher.js';
import { FakeDropbox } from '../fakes/dropbox/server.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { deferred } from '../support/deferred.js';
import { eachDatabase, unique } from '../support/fixtures.js';
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
import { storedSecret } from './stored.js';

const OBJECTS = 40;

await eachDatabase('engine under location changes', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let fake: FakeDropbox;

  before(async () => {
    [s3, fake] = await Promise.all([startS3rver(), new FakeDropbox().start()]);
    client = s3Client(s3.endpoint);
    t = await startTestApp(database, {
      env: {
        FERRY_EGRESS_ALLOW: '127.0.0.1/32',
        FERRY_DROPBOX_API_URL: fake.apiUrl,
        FERRY_DROPBOX_CONTENT_URL: fake.contentUrl,
        FERRY_DROPBOX_TOKEN_URL: fake.tokenUrl,
      },
      worker: { concurrency: 4 },
    });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await Promise.all([s3.close(), fake.close()]);
  });

  const stored = (id: string) => storedSecret(t, id);

  /** Holds every download until released; resolves `waiting` once `count` are held. */
  function holdDownloads(count: number): { waiting: Promise<void>; release(): void } {
    let held = 0;
    const gate = deferred();
    const reached = deferred();
    fake.hold = async () => {
      held++;
      if (held === count) reached.resolve();
      await gate.promise;
    };
    return {
      waiting: reached.promise,
      release() {
        fake.hold = undefined;
        gate.resolve();
      },
    };
  }

  test('a bulk copy loses no object while its location is renamed, refreshed, its token ended by the provider, and its secret replaced', async () => {
    const call: Call = await newWorkspace(t);
    const owner = unique('acct');
    const ns = fake.namespace(owner);
    const files = new Map<string, Buffer>();
    for (let i = 0; i < OBJECTS; i++) {
      const content = Buffer.from(`object ${i} ${unique('x')}`);
      files.set(`f${String(i).padStart(2, '0')}.txt`, content);
      ns.write(`/src/f${String(i).padStart(2, '0')}.txt`, content, 'overwrite');
    }
    const dbx = await createLocation(call, { provider: 'dropbox', secret: { ...fake.oauth.issue(owner) } });
    const dst = await seedBucket(client, {});
    const s3loc = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
      metadata: { endpoint: s3.endpoint },
    });

    const hold = holdDownloads(4);
    const accepted = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: { id: dbx.id, path: 'src/' }, to: { id: s3loc.id, path: `${dst}/out/` } },
    });
    assert.equal(accepted.statusCode, 202, accepted.body);
    const jobUrl = `/v1/jobs/${accepted.json().job_id}`;
    await hold.waiting;

    // With four downloads in flight, the provider ends the access token early and the location is
    // renamed: the next requests get 401, the token is refreshed once, and every store goes on.
    const first = await stored(dbx.id);
    const requests = fake.oauth.refreshRequests.length;
    fake.oauth.expireAccessToken(first.access_token);
    const renamed = await call({
      method: 'PATCH',
      url: '/v1/locations',
      payload: { id: dbx.id, label: unique('renamed') },
    });
    assert.equal(renamed.statusCode, 200, renamed.body);
    hold.release();
    await waitFor(call, jobUrl, (job) => Number((job.counts as { succeeded: number }).succeeded) >= 10);
    assert.deepEqual(
      fake.oauth.refreshRequests.slice(requests),
      [first.refresh_token],
      'one refresh for all stores',
    );

    // With a download held: a requested refresh made by the refresher, then a new secret.
    const hold2 = holdDownloads(1);
    await hold2.waiting;
    const refreshed = await call({ method: 'POST', url: '/v1/locations/refresh', payload: { id: dbx.id } });
    assert.equal(refreshed.statusCode, 202);
    const before = await stored(dbx.id);
    await new Refresher(t.services.refresh, { pollMs: 3_600_000, jitterMs: 0 }).tick();
    assert.notEqual(
      (await stored(dbx.id)).access_token,
      before.access_token,
      'the refresher renewed the token',
    );
    const replaced = await call({
      method: 'PUT',
      url: '/v1/locations',
      payload: { id: dbx.id, secret: { ...fake.oauth.issue(owner) } },
    });
    assert.equal(replaced.statusCode, 200, replaced.body);
    hold2.release();

    const job = await waitFor(call, jobUrl);
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.deepEqual(job.counts, {
      total: OBJECTS,
      pending: 0,
      succeeded: OBJECTS,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    for (const [name, content] of files) {
      assert.deepEqual(await readS3(client, dst, `out/${name}`), content, name);
    }
  });
});
