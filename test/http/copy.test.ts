// docs/api.md "Copy" and "Polling" through HTTP on both databases, with a worker
// in the process and real s3rver and azurite behind the locations.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import type { BlobServiceClient } from '@azure/storage-blob';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type AzuriteHandle, startAzurite } from '../support/azurite.js';
import { deferred } from '../support/deferred.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { eachDatabase, secretFor, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import {
  azureService,
  type Call,
  createLocation,
  newWorkspace,
  readAzure,
  readS3,
  s3Client,
  seedBucket,
  waitFor,
} from '../support/transfers.js';

await eachDatabase('copy', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let azurite: AzuriteHandle;
  let client: S3Client;
  let azure: BlobServiceClient;
  let proxy: FaultProxy;
  before(async () => {
    [s3, azurite] = await Promise.all([startS3rver(), startAzurite()]);
    proxy = await startFaultProxy(s3.endpoint);
    client = s3Client(s3.endpoint);
    azure = azureService(azurite);
    t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' }, worker: true });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await proxy.close();
    await Promise.all([s3.close(), azurite.close()]);
  });

  /** A workspace with two s3 locations on one account (server-side copies) and an azure one. */
  async function setup(): Promise<{ call: Call; a: string; b: string; az: string; labelA: string }> {
    const call = await newWorkspace(t);
    const secret = { access_key_id: 'AKIDSAME', secret_access_key: 'same-secret' };
    const a = await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } });
    const b = await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } });
    const az = await createLocation(call, {
      provider: 'azureblob',
      secret: { access_key_id: AZURITE_ACCOUNT, secret_access_key: AZURITE_KEY },
      metadata: { endpoint: azurite.endpoint },
    });
    return { call, a: a.id, b: b.id, az: az.id, labelA: a.label };
  }

  async function container(): Promise<string> {
    const name = unique('c').toLowerCase();
    await azure.createContainer(name);
    return name;
  }

  const copy = (call: Call, payload: Record<string, unknown>) =>
    call({ method: 'POST', url: '/v1/copy', payload });

  test('a single copy answers 202 queued with a UUID, runs, and the bytes arrive (server-side on one account)', async () => {
    const { call, a, b, labelA } = await setup();
    const body = randomBytes(70_000);
    const src = await seedBucket(client, { 'dir/file one.bin': body });
    const dst = await seedBucket(client, {});
    const res = await copy(call, {
      from: `${labelA}:${src}/dir/file one.bin`,
      to: { id: b, path: `${dst}/copied/file.bin` },
    });
    assert.equal(res.statusCode, 202, res.body);
    const accepted = res.json();
    assert.deepEqual(Object.keys(accepted).sort(), ['id', 'status']);
    assert.equal(accepted.status, 'queued');
    assert.match(accepted.id, /^[0-9a-f-]{36}$/);
    const done = await waitFor(call, `/v1/transfers/${accepted.id}`);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.equal(done.kind, 'copy');
    assert.equal(done.bytes_done, body.length);
    assert.equal(done.bytes_total, body.length);
    assert.ok(done.started_at && done.finished_at && done.created_at && done.updated_at);
    assert.deepEqual(await readS3(client, dst, 'copied/file.bin'), body);
    assert.deepEqual(await readS3(client, src, 'dir/file one.bin'), body, 'the source is untouched');
    void a;
  });

  test('a single copy says what it is (from and to as given) and its bytes_total while the bytes still move', async () => {
    const { call, b, labelA } = await setup();
    // The source through the proxy (another endpoint, so the copy streams): its GET is held mid-body.
    const slow = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKIDSLOW', secret_access_key: 'slow-secret' },
      metadata: { endpoint: proxy.url },
    });
    const body = randomBytes(3 * 1024 * 1024);
    const src = await seedBucket(client, { 'big.bin': body });
    const dst = await seedBucket(client, {});
    const release = deferred();
    proxy.passNext(1); // the stat (HEAD)
    proxy.dropNext(1, release.promise); // the GET: headers and part of the body, then held
    const from = `${slow.label}:${src}/big.bin`;
    const to = { id: b, path: `${dst}/big.bin` };
    const res = await copy(call, { from, to });
    assert.equal(res.statusCode, 202, res.body);
    const url = `/v1/transfers/${res.json().id}`;
    try {
      const running = await waitFor(call, url, (t) => t.status === 'running' && t.bytes_total !== undefined);
      assert.equal(running.bytes_total, body.length);
      assert.deepEqual(running.from, from);
      assert.deepEqual(running.to, to);
    } finally {
      release.resolve();
    }
    const done = await waitFor(call, url);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.equal(done.bytes_total, body.length);
    const listed = (await call({ method: 'GET', url: '/v1/transfers' })).json().transfers;
    assert.deepEqual(
      listed.map((t: { from: unknown; to: unknown }) => [t.from, t.to]),
      [[from, to]],
    );
    void labelA;
  });

  test('a single copy says how its bytes were proven, as a report line does; one completed before ferry kept it says nothing, not size', async () => {
    const { call, b, labelA } = await setup();
    // Another account on the same server: the bytes stream through ferry, which sends their MD5.
    const other = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKIDOTHER', secret_access_key: 'other-secret' },
      metadata: { endpoint: s3.endpoint },
    });
    const body = randomBytes(10_000);
    const src = await seedBucket(client, { 'a.bin': body });
    const dst = await seedBucket(client, {});
    const proven = async (to: string) => {
      const res = await copy(call, { from: `${labelA}:${src}/a.bin`, to });
      assert.equal(res.statusCode, 202, res.body);
      const done = await waitFor(call, `/v1/transfers/${res.json().id}`);
      assert.equal(done.status, 'complete', JSON.stringify(done));
      return done;
    };
    // Streamed: s3rver's ETag is the MD5 of what it received, compared with the one ferry sent; server-side
    // (one account): the copy's ETag is the MD5 of the source version it was pinned to (docs/api.md,
    // "Verification").
    for (const to of [`${other.label}:${dst}/streamed.bin`, `${b}:${dst}/server-side.bin`]) {
      const done = await proven(to);
      assert.equal(done.verified, 'checksum', `${to}: ${JSON.stringify(done)}`);
      assert.equal(done.verified_by, 'md5', to);
    }

    // A transfer completed before ferry kept it (migration 2026-12-04-proof-of-transfers) has none:
    // unknown, which is not "size".
    const old = await proven(`${other.label}:${dst}/before.bin`);
    await t.services.db.kysely
      .updateTable('transfers')
      .set({ verified: null })
      .where('id', '=', String(old.id))
      .execute();
    const again = (await call({ method: 'GET', url: `/v1/transfers/${old.id}` })).json();
    assert.equal(again.status, 'complete');
    assert.equal('verified' in again, false, JSON.stringify(again));
    assert.equal('verified_by' in again, false, JSON.stringify(again));
  });

  test('a single copy from s3 to azure streams the bytes across', async () => {
    const { call, a, az } = await setup();
    const body = randomBytes(9 * 1024 * 1024 + 17);
    const src = await seedBucket(client, { 'big.bin': body });
    const dst = await container();
    const res = await copy(call, { from: `${a}:${src}/big.bin`, to: `${az}:${dst}/big.bin` });
    const done = await waitFor(call, `/v1/transfers/${res.json().id}`);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.deepEqual(await readAzure(azure, dst, 'big.bin'), body);
  });

  test('a missing source object fails the transfer with the reason', async () => {
    const { call, a, b } = await setup();
    const src = await seedBucket(client, {});
    const res = await copy(call, { from: `${a}:${src}/nope.txt`, to: `${b}:${src}-x/nope.txt` });
    const done = await waitFor(call, `/v1/transfers/${res.json().id}`);
    assert.equal(done.status, 'failed');
    assert.match(String(done.error), /NoSuchKey|not found|nope/i);
  });

  test('a prefix copy is a job: planning, then complete, with counts and bytes; the destination mirrors the source', async () => {
    const { call, a, az } = await setup();
    const objects: Record<string, Buffer> = {};
    for (let i = 0; i < 25; i++)
      objects[`photos/${i % 3 === 0 ? 'raw/' : ''}img ${i}.jpg`] = randomBytes(1000 + i);
    objects['photos/empty.txt'] = Buffer.alloc(0);
    objects['other/not-this.txt'] = Buffer.from('no');
    const src = await seedBucket(client, objects);
    const dst = await container();
    const res = await copy(call, { from: `${a}:${src}/photos/`, to: `${az}:${dst}/backup/` });
    assert.equal(res.statusCode, 202, res.body);
    const accepted = res.json();
    assert.deepEqual(Object.keys(accepted).sort(), ['job_id', 'status']);
    assert.equal(accepted.status, 'planning');
    const job = await waitFor(call, `/v1/jobs/${accepted.job_id}`);
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.deepEqual(job.counts, {
      total: 26,
      pending: 0,
      succeeded: 26,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    const total = Object.entries(objects)
      .filter(([k]) => k.startsWith('photos/'))
      .reduce((n, [, v]) => n + v.length, 0);
    assert.equal(job.bytes_done, total);
    assert.deepEqual(job.from, { id: a, path: `${src}/photos/` });
    assert.deepEqual(job.to, { id: az, path: `${dst}/backup/` });
    assert.equal(job.overwrite, 'always');
    for (const [key, value] of Object.entries(objects)) {
      const got = await readAzure(azure, dst, `backup/${key.slice('photos/'.length)}`);
      if (key.startsWith('photos/')) assert.deepEqual(got, value, key);
    }
    assert.equal(await readAzure(azure, dst, 'backup/not-this.txt'), undefined);
  });

  test('a prefix copy on one account sends one CopyObject per object, pinned to the listed version, and no HEAD', async () => {
    const call = await newWorkspace(t);
    const secret = { access_key_id: 'AKIDSAME', secret_access_key: 'same-secret' };
    const metadata = { endpoint: proxy.url };
    const a = await createLocation(call, { provider: 's3', secret, metadata });
    const b = await createLocation(call, { provider: 's3', secret, metadata });
    const objects = Object.fromEntries(
      Array.from({ length: 5 }, (_, i) => [`p/k${i}.bin`, randomBytes(3000 + i)]),
    );
    const src = await seedBucket(client, objects);
    const dst = await seedBucket(client, {});
    const before = proxy.seen.length;
    const res = await copy(call, { from: `${a.label}:${src}/p/`, to: `${b.label}:${dst}/q/` });
    assert.equal(res.statusCode, 202, res.body);
    const done = await waitFor(call, `/v1/jobs/${res.json().job_id}`);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    const sent = proxy.seen.slice(before);
    assert.deepEqual(
      sent.filter((r) => r.method === 'HEAD'),
      [],
      'the listing gave sizes and ETags; the copies confirmed themselves',
    );
    assert.equal(sent.filter((r) => r.method === 'PUT' && r.copySource).length, 5);
    for (const [key, body] of Object.entries(objects)) {
      assert.deepEqual(await readS3(client, dst, key.replace('p/', 'q/')), body);
    }
  });

  test('a manifest copies only the listed keys; if-missing skips objects already there', async () => {
    const { call, a, b } = await setup();
    const src = await seedBucket(client, {
      'p/a.txt': 'A',
      'p/b.txt': 'B',
      'p/c.txt': 'C',
      'p/sub/d.txt': 'D',
    });
    const dst = await seedBucket(client, { 'q/b.txt': 'old B' });
    const res = await copy(call, {
      from: `${a}:${src}/p/`,
      to: `${b}:${dst}/q/`,
      manifest: ['a.txt', 'b.txt', 'sub/d.txt'],
      overwrite: 'if-missing',
    });
    assert.equal(res.statusCode, 202, res.body);
    const job = await waitFor(call, `/v1/jobs/${res.json().job_id}`);
    assert.equal(job.status, 'complete');
    assert.deepEqual(job.counts, {
      total: 3,
      pending: 0,
      succeeded: 2,
      skipped: 1,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(job.overwrite, 'if-missing');
    assert.equal(String(await readS3(client, dst, 'q/b.txt')), 'old B');
    assert.equal(String(await readS3(client, dst, 'q/a.txt')), 'A');
    assert.equal(String(await readS3(client, dst, 'q/sub/d.txt')), 'D');
    assert.equal(await readS3(client, dst, 'q/c.txt'), undefined);
  });

  test('objects that cannot be copied make a partial job whose failures are listed; retry re-plans them', async () => {
    const { call, a, b } = await setup();
    const src = await seedBucket(client, { 'p/here.txt': 'here' });
    const dst = await seedBucket(client, {});
    const res = await copy(call, {
      from: `${a}:${src}/p/`,
      to: `${b}:${dst}/`,
      manifest: ['here.txt', 'missing-1.txt', 'missing-2.txt'],
    });
    const id = res.json().job_id;
    const job = await waitFor(call, `/v1/jobs/${id}`);
    assert.equal(job.status, 'partial', JSON.stringify(job));
    assert.deepEqual(job.counts, {
      total: 3,
      pending: 0,
      succeeded: 1,
      skipped: 0,
      failed: 2,
      deleted: 0,
      size_only: 0,
    });
    const page1 = await call({ method: 'GET', url: `/v1/jobs/${id}/failures?limit=1` });
    assert.equal(page1.statusCode, 200);
    const first = page1.json();
    assert.equal(first.failures.length, 1);
    assert.equal(first.failures[0].key, 'missing-1.txt');
    assert.equal(first.failures[0].attempts, 1);
    assert.match(first.failures[0].error, /NoSuchKey|NotFound|not found/i);
    assert.ok(first.failures[0].last_attempt_at);
    assert.ok(first.next_cursor);
    const page2 = (
      await call({ method: 'GET', url: `/v1/jobs/${id}/failures?limit=1&cursor=${first.next_cursor}` })
    ).json();
    assert.deepEqual(
      page2.failures.map((f: { key: string }) => f.key),
      ['missing-2.txt'],
    );
    assert.equal(page2.next_cursor, undefined);

    // The objects appear; a retry copies them and the job completes.
    await seedBucketObjects(src, { 'p/missing-1.txt': 'one', 'p/missing-2.txt': 'two' });
    const retry = await call({ method: 'POST', url: `/v1/jobs/${id}/retry` });
    assert.equal(retry.statusCode, 202, retry.body);
    assert.deepEqual(retry.json(), { job_id: id, status: 'planning' });
    const again = await waitFor(call, `/v1/jobs/${id}`);
    assert.equal(again.status, 'complete', JSON.stringify(again));
    assert.deepEqual(again.counts, {
      total: 3,
      pending: 0,
      succeeded: 3,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(String(await readS3(client, dst, 'missing-2.txt')), 'two');
    const retryDone = await call({ method: 'POST', url: `/v1/jobs/${id}/retry`, payload: {} });
    assert.equal(retryDone.statusCode, 409);
  });

  async function seedBucketObjects(bucket: string, objects: Record<string, string>): Promise<void> {
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    for (const [Key, Body] of Object.entries(objects))
      await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body }));
  }

  test('every object failing makes the job failed; a prefix that does not exist fails planning with the reason', async () => {
    const { call, a, b } = await setup();
    const src = await seedBucket(client, {});
    const all = await copy(call, { from: `${a}:${src}/p/`, to: `${b}:${src}-d/`, manifest: ['x', 'y'] });
    assert.equal((await waitFor(call, `/v1/jobs/${all.json().job_id}`)).status, 'failed');
    const nowhere = await copy(call, { from: `${a}:${src}-nowhere/p/`, to: `${b}:${src}-d/` });
    const job = await waitFor(call, `/v1/jobs/${nowhere.json().job_id}`);
    assert.equal(job.status, 'failed');
    assert.match(String(job.error), /planning failed/);
  });

  // Cancel of a running job, of a finished one, and retry after cancel: test/http/cancel.test.ts.
  test('retry and cancel take no body; an unknown job is 404', async () => {
    const { call, a, b } = await setup();
    const src = await seedBucket(client, { 'p/x.txt': 'x' });
    const dst = await seedBucket(client, {});
    const job = (await copy(call, { from: `${a}:${src}/p/`, to: `${b}:${dst}/c/` })).json().job_id;
    // A body is refused before the job's state is looked at, whatever that state is.
    const withBody = await call({ method: 'POST', url: `/v1/jobs/${job}/cancel`, payload: { force: true } });
    assert.equal(withBody.statusCode, 400, withBody.body);
    const retryWithBody = await call({ method: 'POST', url: `/v1/jobs/${job}/retry`, payload: { x: 1 } });
    assert.equal(retryWithBody.statusCode, 400, retryWithBody.body);
    assert.equal((await waitFor(call, `/v1/jobs/${job}`)).status, 'complete');
    for (const url of [`/v1/jobs/${job}/retry`, `/v1/jobs/${job}/cancel`]) {
      const missing = await call({
        method: 'POST',
        url: url.replace(job, '00000000-0000-4000-8000-000000000000'),
      });
      assert.equal(missing.statusCode, 404);
    }
  });

  test('path rules, self-copy and option misuse are 400 and do not count against the limit', async () => {
    const { call, a, b } = await setup();
    const cases: Array<Record<string, unknown>> = [
      { from: `${a}:/bucket/key`, to: `${b}:bucket/key` },
      { from: `${a}:bucket/key/`, to: `${b}:bucket/key` },
      { from: `${a}:bucket/key`, to: `${b}:bucket/dir/` },
      { from: `${a}:bucket/a:b`, to: `${b}:bucket/key` },
      { from: `${a}:bucket/../key`, to: `${b}:bucket/key` },
      { from: `${a}:-bucket/key`, to: `${b}:bucket/key` },
      { from: `${a}:bucket`, to: `${b}:bucket/key` },
      { from: `${a}:bucket/key`, to: `${a}:bucket/key` },
      { from: `${a}:bucket/p/`, to: `${a}:bucket/p/q/` },
      { from: `${a}:bucket/p/q/`, to: `${a}:bucket/p/` },
      { from: `${a}:bucket/key`, to: `${b}:bucket/key`, overwrite: 'always' },
      { from: `${a}:bucket/key`, to: `${b}:bucket/key`, manifest: ['a'] },
      { from: `${a}:bucket/p/`, to: `${b}:bucket/q/`, manifest: [] },
      { from: `${a}:bucket/p/`, to: `${b}:bucket/q/`, manifest: ['a/../b'] },
      { from: `${a}:bucket/p/`, to: `${b}:bucket/q/`, manifest: ['/a'] },
      { from: `${a}:bucket/p/`, to: `${b}:bucket/q/`, manifest: ['a/'] },
      { from: `${a}:bucket/p/`, to: `${b}:bucket/q/`, manifest: [''] },
      { from: `${a}:bucket/p/`, to: `${b}:bucket/q/`, manifest: ['x'.repeat(4097)] },
      { from: `${a}:bucket/p/`, to: `${b}:bucket/q/`, manifest: ['a', 'a'] },
      { from: `${a}:bucket/p/`, to: `${b}:bucket/q/`, overwrite: 'never' },
      { from: [`${a}:bucket/key`], to: `${b}:bucket/key` },
      { from: { id: a }, to: `${b}:bucket/key` },
      { from: `${a}:bucket/key`, to: `${b}:bucket/key`, speed: 'fast' },
      { from: 'no-colon', to: `${b}:bucket/key` },
      { to: `${b}:bucket/key` },
    ];
    for (let round = 0; round < 2; round++) {
      for (const payload of cases) {
        const res = await copy(call, payload);
        assert.equal(res.statusCode, 400, `${JSON.stringify(payload).slice(0, 160)}: ${res.body}`);
        assert.equal(res.json().error, 400);
      }
    }
    // 50 invalid requests did not use up the limit.
    const ok = await copy(call, { from: `${a}:bucket/key`, to: `${b}:bucket/key2` });
    assert.equal(ok.statusCode, 202, ok.body);
  });

  test('object-form targets and UUIDs in the compact form address locations; unknown locations are 404', async () => {
    const { call, a, b, labelA } = await setup();
    const src = await seedBucket(client, { 'k.txt': 'k' });
    for (const from of [
      { id: a, path: `${src}/k.txt` },
      { name: labelA, path: `${src}/k.txt` },
      { name: labelA, id: a, path: `${src}/k.txt` },
      `${a}:${src}/k.txt`,
    ]) {
      const res = await copy(call, { from, to: { id: b, path: `${src}/copy-${unique('k')}.txt` } });
      assert.equal(res.statusCode, 202, res.body);
    }
    const unknown = await copy(call, { from: `${unique('nobody')}:${src}/k.txt`, to: `${b}:${src}/z.txt` });
    assert.equal(unknown.statusCode, 404);
    const unknownId = await copy(call, {
      from: `00000000-0000-4000-8000-000000000000:${src}/k.txt`,
      to: `${b}:${src}/z.txt`,
    });
    assert.equal(unknownId.statusCode, 404);
  });

  test('a location that is not active, or whose single-use token expires within 5 minutes, is 409', async () => {
    const { call, a, b } = await setup();
    await t.services.locations.markFailed(b, 'InvalidAccessKeyId: gone');
    const failed = await copy(call, { from: `${a}:bucket/key`, to: `${b}:bucket/key` });
    assert.equal(failed.statusCode, 409, failed.body);
    assert.match(failed.json().message, /failed/);
    const box = await createLocation(call, {
      provider: 'box',
      secret: { ...secretFor('box'), expiry: new Date(Date.now() + 2 * 60_000).toISOString() },
    });
    const expiring = await copy(call, { from: `${box.id}:folder/file.txt`, to: `${a}:bucket/file.txt` });
    assert.equal(expiring.statusCode, 409, expiring.body);
    assert.match(expiring.json().message, /refresh/);
    const stable = await createLocation(call, {
      provider: 'dropbox',
      secret: { ...secretFor('dropbox'), expiry: new Date(Date.now() + 2 * 60_000).toISOString() },
    });
    const fine = await copy(call, { from: `${stable.id}:folder/file.txt`, to: `${a}:bucket/file.txt` });
    assert.equal(fine.statusCode, 202, 'oauth-stable tokens are refreshed in flight, not refused');
  });

  test('30 copies a minute per workspace; the next is 429 with Retry-After; another workspace is unaffected', async () => {
    const { call, a, b } = await setup();
    for (let i = 0; i < 30; i++) {
      const res = await copy(call, { from: `${a}:bucket/k${i}`, to: `${b}:bucket/k${i}` });
      assert.equal(res.statusCode, 202, `copy ${i}: ${res.body}`);
    }
    const limited = await copy(call, { from: `${a}:bucket/k`, to: `${b}:bucket/k` });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().error, 429);
    const wait = Number(limited.headers['retry-after']);
    assert.ok(wait >= 1 && wait <= 60, `Retry-After ${wait}`);
    const other = await setup();
    assert.equal(
      (await copy(other.call, { from: `${other.a}:bucket/k`, to: `${other.b}:bucket/k` })).statusCode,
      202,
    );
  });

  test('a body over 8 MiB is 413; a 100,000-key manifest is accepted', async () => {
    const { call, a, b } = await setup();
    const huge = await copy(call, {
      from: `${a}:bucket/p/`,
      to: `${b}:bucket/q/`,
      manifest: ['x'.repeat(9 * 1024 * 1024)],
    });
    assert.equal(huge.statusCode, 413);
    const keys = Array.from({ length: 100_000 }, (_, i) => `dir-${i % 100}/object-${i}.bin`);
    const big = await copy(call, { from: `${a}:bucket/p/`, to: `${b}:bucket/q/`, manifest: keys });
    assert.equal(big.statusCode, 202, big.body);
    const tooMany = await copy(call, {
      from: `${a}:bucket/p/`,
      to: `${b}:bucket/q/`,
      manifest: [...keys, 'one-more'],
    });
    assert.equal(tooMany.statusCode, 400);
    // Only to stop the worker on 100,000 objects that do not exist: the job may have failed planning
    // already (the prefix is empty), and then there is nothing to cancel.
    await call({ method: 'POST', url: `/v1/jobs/${big.json().job_id}/cancel` });
  });

  test('transfers and jobs list newest first and page with next_cursor; other workspaces see none of them', async () => {
    // Its own app, without a worker, on a clock moved a second between copies: "newest first" is
    // then the order they were made in, not what several copies made in one millisecond happen to get.
    const clock = new ManualClock();
    const listed = await startTestApp(database, { clock });
    try {
      await listsNewestFirst(listed, clock);
    } finally {
      await listed.close();
    }
  });

  async function listsNewestFirst(app: TestApp, clock: ManualClock): Promise<void> {
    const call = await newWorkspace(app);
    const secret = { access_key_id: 'AKIDSAME', secret_access_key: 'same-secret' };
    const a = (await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } }))
      .id;
    const b = (await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } }))
      .id;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      ids.push((await copy(call, { from: `${a}:bucket/k${i}`, to: `${b}:bucket/k${i}` })).json().id);
    }
    const page1 = (await call({ method: 'GET', url: '/v1/transfers?limit=2' })).json();
    assert.equal(page1.transfers.length, 2);
    assert.ok(page1.next_cursor);
    const page2 = (
      await call({ method: 'GET', url: `/v1/transfers?limit=2&cursor=${page1.next_cursor}` })
    ).json();
    const seen = [...page1.transfers, ...page2.transfers].map((x: { id: string }) => x.id);
    assert.deepEqual(seen, [...ids].reverse());
    assert.equal(page2.next_cursor, undefined);
    const other = await newWorkspace(app);
    assert.deepEqual((await other({ method: 'GET', url: '/v1/transfers' })).json(), { transfers: [] });
    assert.equal((await other({ method: 'GET', url: `/v1/transfers/${ids[0]}` })).statusCode, 404);
    assert.equal((await call({ method: 'GET', url: '/v1/transfers/not-a-uuid' })).statusCode, 404);
    assert.equal(
      (await call({ method: 'GET', url: '/v1/jobs/00000000-0000-4000-8000-000000000000' })).statusCode,
      404,
    );
    assert.equal((await call({ method: 'GET', url: '/v1/transfers?limit=0' })).statusCode, 400);
    assert.equal((await call({ method: 'GET', url: '/v1/transfers?cursor=bogus' })).statusCode, 400);
    clock.advance(1000);
    const job = (await copy(call, { from: `${a}:bucket/p/`, to: `${b}:bucket/q/`, manifest: ['a'] })).json()
      .job_id;
    const jobs = (await call({ method: 'GET', url: '/v1/jobs' })).json();
    assert.equal(jobs.jobs[0].job_id, job);
    assert.ok('counts' in jobs.jobs[0]);
  }
});
