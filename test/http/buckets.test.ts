// docs/api.md "Buckets" through HTTP on both databases: POST /v1/buckets against s3rver (s3), azurite
// (azureblob) and the gcs fake (through the production store), and a bulk or single copy whose
// destination bucket does not exist, which fails once with a message naming the bucket.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FakeGcs } from '../fakes/gcs/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type AzuriteHandle, startAzurite } from '../support/azurite.js';
import { eachDatabase, gcsServiceAccount, secretFor, unique } from '../support/fixtures.js';
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

const EMAIL = 'buckets@ferry-test.iam.gserviceaccount.com';

await eachDatabase('POST /v1/buckets', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let azurite: AzuriteHandle;
  let gcs: FakeGcs;
  let gcsKey: string;
  before(async () => {
    [s3, azurite, gcs] = await Promise.all([startS3rver(), startAzurite(), FakeGcs.start()]);
    gcsKey = gcs.oauth.newAccount(EMAIL);
    t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' }, worker: true });
  });
  after(async () => {
    await t?.close();
    await Promise.all([s3?.close(), azurite?.close(), gcs?.close()]);
  });

  const s3Location = (call: Call) =>
    createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKID', secret_access_key: unique('secret') },
      metadata: { endpoint: s3.endpoint },
    });
  const create = (call: Call, payload: Record<string, unknown>) =>
    call({ method: 'POST', url: '/v1/buckets', payload });
  const listRoot = async (call: Call, id: string) => {
    const res = await call({ method: 'POST', url: '/v1/list', payload: { id } });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().entries as Array<{ name: string }>).map((e) => e.name);
  };

  test('s3: 201 with the listing entry; the bucket lists at the root; a second create is 409', async () => {
    const call = await newWorkspace(t);
    const { id, label } = await s3Location(call);
    const bucket = unique('mb').toLowerCase();
    const res = await create(call, { name: label, bucket });
    assert.equal(res.statusCode, 201, res.body);
    const entry = res.json();
    assert.deepEqual(
      { ...entry, modTime: undefined },
      { name: bucket, path: bucket, size: -1, isDir: true, modTime: undefined },
    );
    assert.match(entry.modTime, /^\d{4}-\d\d-\d\dT/);
    assert.ok((await listRoot(call, id)).includes(bucket));
    const again = await create(call, { id, bucket });
    assert.equal(again.statusCode, 409, again.body);
    assert.deepEqual(again.json(), {
      error: 409,
      message: `s3: bucket "${bucket}" already exists, and this location can open it`,
    });
  });

  test('a name the provider refuses is 400 naming the rule, and reaches no server', async () => {
    const call = await newWorkspace(t);
    // A location on a port nothing listens on: any request would answer 502.
    const { label } = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKID', secret_access_key: 'x' },
      metadata: { endpoint: 'http://127.0.0.1:9' },
    });
    const cases: Array<[string, RegExp]> = [
      ['ab', /bucket names are 3 to 63 characters long/],
      ['Upper', /bucket names hold only lower-case letters, digits, dots and hyphens/],
      ['a..b', /bucket names have no two dots side by side/],
      ['192.168.5.4', /not formatted as an IP address/],
    ];
    for (const [bucket, rule] of cases) {
      const res = await create(call, { name: label, bucket });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().message, rule);
      assert.match(res.json().message, new RegExp(`"${bucket.replaceAll('.', '\\.')}"`));
    }
  });

  test('a folder store is 400 (folders come from writing into them); unknown location 404; no bucket 400', async () => {
    const call = await newWorkspace(t);
    const { label } = await createLocation(call, { provider: 'dropbox', secret: secretFor('dropbox') });
    const folder = await create(call, { name: label, bucket: 'photos' });
    assert.equal(folder.statusCode, 400, folder.body);
    assert.match(
      folder.json().message,
      /has folders, not buckets: a folder is created by writing a file into it/,
    );
    assert.equal((await create(call, { name: unique('nobody'), bucket: 'photos' })).statusCode, 404);
    assert.equal((await create(call, { name: label })).statusCode, 400);
    assert.equal((await create(call, { name: label, bucket: 'x', extra: 1 })).statusCode, 400);
  });

  test('a location that is not active is 409, as for copy', async () => {
    const call = await newWorkspace(t);
    const { id } = await s3Location(call);
    await t.services.db.kysely
      .updateTable('locations')
      .set({ status: 'failed', validation_error: 'rejected' })
      .where('id', '=', id)
      .execute();
    const res = await create(call, { id, bucket: unique('mb').toLowerCase() });
    assert.equal(res.statusCode, 409, res.body);
    assert.match(res.json().message, /is failed; only active locations accept new buckets/);
  });

  test('azureblob: a container is made on azurite; a second create is 409 naming the account', async () => {
    const call = await newWorkspace(t);
    const { id } = await createLocation(call, {
      provider: 'azureblob',
      secret: { access_key_id: AZURITE_ACCOUNT, secret_access_key: AZURITE_KEY },
      metadata: { endpoint: azurite.endpoint },
    });
    const container = unique('mb').toLowerCase();
    const res = await create(call, { id, bucket: container });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().path, container);
    assert.ok((await listRoot(call, id)).includes(container));
    const again = await create(call, { id, bucket: container });
    assert.equal(again.statusCode, 409, again.body);
    assert.match(again.json().message, /the container already exists in this storage account/);
    const bad = await create(call, { id, bucket: 'two--hyphens' });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /container names have no two hyphens side by side/);
  });

  test('gcs: a bucket is made in the project; 409 says it is yours; a 403 leaves the location active', async () => {
    const call = await newWorkspace(t);
    const { id } = await createLocation(call, {
      provider: 'gcs',
      secret: gcsServiceAccount(gcsKey, EMAIL, gcs.tokenUrl),
      metadata: { endpoint: gcs.url },
    });
    const bucket = unique('mb').toLowerCase();
    const res = await create(call, { id, bucket });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(gcs.state.buckets.get(bucket)?.project, 'ferry-test');
    const again = await create(call, { id, bucket });
    assert.equal(again.statusCode, 409, again.body);
    assert.match(again.json().message, /you already own it/);
    assert.equal((await create(call, { id, bucket: 'google-photos' })).statusCode, 400);
    // A service account without storage.buckets.create: the key is fine, the permission is missing.
    gcs.server.inject({
      status: 403,
      headers: { 'content-type': 'application/json' },
      body: {
        error: {
          code: 403,
          message: `${EMAIL} does not have storage.buckets.create access to the Google Cloud project.`,
          errors: [{ reason: 'forbidden', domain: 'global', message: 'forbidden' }],
        },
      },
    });
    const refused = await create(call, { id, bucket: unique('mb').toLowerCase() });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.match(refused.json().message, /does not have storage\.buckets\.create access/);
    const status = await call({ method: 'POST', url: '/v1/locations/status', payload: { id } });
    assert.equal(status.json().status, 'active');
  });

  test('a bulk copy into a missing bucket fails in planning with one error naming it; create it and retry', async () => {
    const call = await newWorkspace(t);
    const { label } = await s3Location(call);
    const client = s3Client(s3.endpoint);
    try {
      const objects: Record<string, string> = {};
      for (let i = 0; i < 40; i++) objects[`in/${i}.txt`] = `object ${i}`;
      const source = await seedBucket(client, objects);
      const missing = unique('missing').toLowerCase();
      const copy = await call({
        method: 'POST',
        url: '/v1/copy',
        payload: { from: `${label}:${source}/in/`, to: `${label}:${missing}/out/` },
      });
      assert.equal(copy.statusCode, 202, copy.body);
      const url = `/v1/jobs/${copy.json().job_id}`;
      const job = await waitFor(call, url);
      assert.equal(job.status, 'failed');
      assert.equal(
        job.error,
        `planning failed: the destination bucket "${missing}" does not exist on location "${label}"; create it with POST /v1/buckets`,
      );
      assert.deepEqual(job.counts, {
        total: 0,
        pending: 0,
        succeeded: 0,
        skipped: 0,
        failed: 0,
        deleted: 0,
        size_only: 0,
      });
      const failures = await call({ method: 'GET', url: `${url}/failures` });
      assert.deepEqual(failures.json().failures, []);
      // The way out the message gives: create the bucket, retry the job.
      assert.equal((await create(call, { name: label, bucket: missing })).statusCode, 201);
      assert.equal((await call({ method: 'POST', url: `${url}/retry` })).statusCode, 202);
      const retried = await waitFor(call, url);
      assert.equal(retried.status, 'complete', JSON.stringify(retried));
      assert.equal((retried.counts as { succeeded: number }).succeeded, 40);
      assert.equal((await readS3(client, missing, 'out/7.txt'))?.toString(), 'object 7');
    } finally {
      client.destroy();
    }
  });

  test('a single copy into a missing bucket fails with the same message', async () => {
    const call = await newWorkspace(t);
    const { label } = await s3Location(call);
    const client = s3Client(s3.endpoint);
    try {
      const source = await seedBucket(client, { 'a.txt': 'a' });
      const missing = unique('missing').toLowerCase();
      const copy = await call({
        method: 'POST',
        url: '/v1/copy',
        payload: { from: `${label}:${source}/a.txt`, to: `${label}:${missing}/a.txt` },
      });
      assert.equal(copy.statusCode, 202, copy.body);
      const transfer = await waitFor(call, `/v1/transfers/${copy.json().id}`);
      assert.equal(transfer.status, 'failed');
      assert.equal(
        transfer.error,
        `the destination bucket "${missing}" does not exist on location "${label}"; create it with POST /v1/buckets`,
      );
      // A missing source in an existing bucket keeps its own words.
      const gone = await call({
        method: 'POST',
        url: '/v1/copy',
        payload: { from: `${label}:${source}/nothing.txt`, to: `${label}:${source}/b.txt` },
      });
      const other = await waitFor(call, `/v1/transfers/${gone.json().id}`);
      assert.equal(other.status, 'failed');
      assert.doesNotMatch(String(other.error), /destination bucket/);
    } finally {
      client.destroy();
    }
  });
});
