// docs/api.md "Sync" through HTTP on both databases, with a worker in the process and real s3rver and
// azurite behind the locations; the s3 locations go through a fault proxy that records every request.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { BlobServiceClient } from '@azure/storage-blob';
import { startTestApp, type TestApp } from '../support/app.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type AzuriteHandle, startAzurite } from '../support/azurite.js';
import { type FaultProxy, type SeenRequest, startFaultProxy } from '../support/fault-proxy.js';
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
import { waitUntil } from '../support/wait.js';

await eachDatabase('sync', (database) => {
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
    // Five copies a minute per workspace: enough for each test, and the limit test reaches it.
    t = await startTestApp(database, {
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_RATE_COPY_PER_MINUTE: '5' },
      worker: true,
    });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await proxy.close();
    await Promise.all([s3.close(), azurite.close()]);
  });

  /** Two s3 locations on one account through the proxy, and an azure one. */
  async function setup(): Promise<{ call: Call; a: string; b: string; az: string }> {
    const call = await newWorkspace(t);
    const secret = { access_key_id: 'AKIDSYNC', secret_access_key: 'sync-secret' };
    const metadata = { endpoint: proxy.url };
    const a = await createLocation(call, { provider: 's3', secret, metadata });
    const b = await createLocation(call, { provider: 's3', secret, metadata });
    const az = await createLocation(call, {
      provider: 'azureblob',
      secret: { access_key_id: AZURITE_ACCOUNT, secret_access_key: AZURITE_KEY },
      metadata: { endpoint: azurite.endpoint },
    });
    return { call, a: a.id, b: b.id, az: az.id };
  }

  const post = (call: Call, url: string, payload: Record<string, unknown>) =>
    call({ method: 'POST', url, payload });

  async function sync(call: Call, payload: Record<string, unknown>) {
    const res = await post(call, '/v1/sync', payload);
    assert.equal(res.statusCode, 202, res.body);
    const accepted = res.json();
    assert.deepEqual(Object.keys(accepted).sort(), ['job_id', 'status']);
    assert.equal(accepted.status, 'planning');
    return waitFor(call, `/v1/jobs/${accepted.job_id}`);
  }

  async function put(bucket: string, objects: Record<string, string | Buffer>): Promise<void> {
    for (const [Key, Body] of Object.entries(objects))
      await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body }));
  }

  /** The latest LastModified of `bucket`'s objects (s3rver's, to the second). */
  async function newest(bucket: string): Promise<number> {
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    return Math.max(...(listed.Contents ?? []).map((o) => o.LastModified?.getTime() ?? 0));
  }

  /** The requests the proxy saw from `from` on that are not listings. */
  const perObject = (seen: ReadonlyArray<SeenRequest>) =>
    seen.filter((r) => !(r.method === 'GET' && r.url.includes('list-type=2')));

  /** The reasons a job's skipped objects carry, by key (the error column). */
  async function skippedReasons(jobId: string): Promise<Record<string, string | null>> {
    const rows = await t.services.db.kysely
      .selectFrom('job_objects')
      .select(['key', 'error'])
      .where('job_id', '=', jobId)
      .where('status', '=', 'skipped')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.key, r.error]));
  }

  test('a first sync copies everything; a second copies nothing and makes no request per object', async () => {
    const { call, a, b } = await setup();
    const objects = { 'p/a.txt': 'A', 'p/sub/b.txt': 'BB', 'p/sub/deep/c.bin': randomBytes(2000) };
    const src = await seedBucket(client, objects);
    const dst = await seedBucket(client, {});
    const body = { from: `${a}:${src}/p/`, to: `${b}:${dst}/q/` };
    const first = await sync(call, body);
    assert.equal(first.status, 'complete', JSON.stringify(first));
    assert.equal(first.kind, 'sync');
    assert.equal(first.compare, 'size-modtime');
    assert.equal(first.delete, false);
    assert.deepEqual(first.counts, {
      total: 3,
      pending: 0,
      succeeded: 3,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    for (const [key, value] of Object.entries(objects))
      assert.deepEqual(await readS3(client, dst, key.replace('p/', 'q/')), Buffer.from(value));

    const before = proxy.seen.length;
    const second = await sync(call, body);
    assert.equal(second.status, 'complete', JSON.stringify(second));
    assert.deepEqual(second.counts, {
      total: 3,
      pending: 0,
      succeeded: 0,
      skipped: 3,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(second.bytes_done, 0);
    assert.deepEqual(perObject(proxy.seen.slice(before)), [], 'listings only: no stat, read or copy');
    assert.deepEqual(await skippedReasons(String(second.job_id)), {
      'a.txt': 'equal by size-modtime',
      'sub/b.txt': 'equal by size-modtime',
      'sub/deep/c.bin': 'equal by size-modtime',
    });
    // A bulk copy says its kind too.
    const copy = await post(call, '/v1/copy', { from: `${a}:${src}/p/`, to: `${b}:${dst}/r/` });
    const job = await waitFor(call, `/v1/jobs/${copy.json().job_id}`);
    assert.equal(job.kind, 'copy');
    assert.equal((job.counts as Record<string, unknown>).deleted, 0, 'every kind counts deletions');
    const listed = (await call({ method: 'GET', url: '/v1/jobs' })).json().jobs;
    assert.deepEqual(
      listed.map((j: { kind: string }) => j.kind),
      ['copy', 'sync', 'sync'],
    );
  });

  test('a changed object and a new one are copied, the rest skipped; an older destination is copied over', async () => {
    const { call, a, b } = await setup();
    const src = await seedBucket(client, { 'same.txt': 'same', 'changed.txt': 'v1', 'touched.txt': 'xx' });
    const dst = await seedBucket(client, {});
    const body = { from: `${a}:${src}/`, to: `${b}:${dst}/` };
    assert.equal((await sync(call, body)).status, 'complete');
    // s3rver keeps times to the second: the touched source is written once the clock has passed the
    // second its copy was stamped in (a condition on the copies' own times, not a pause).
    const copiedAt = await newest(dst);
    await waitUntil(() => Date.now() >= copiedAt + 1000, { what: 'the second after the copies' });
    await put(src, { 'changed.txt': 'version 2', 'new.txt': 'new', 'touched.txt': 'yy' });
    const job = await sync(call, body);
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.deepEqual(job.counts, {
      total: 4,
      pending: 0,
      succeeded: 3,
      skipped: 1,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(String(await readS3(client, dst, 'changed.txt')), 'version 2');
    assert.equal(String(await readS3(client, dst, 'new.txt')), 'new');
    assert.equal(String(await readS3(client, dst, 'touched.txt')), 'yy');
    // By size alone the touched object (same size) would have been equal.
    await put(src, { 'touched.txt': 'zz' });
    const bySize = await sync(call, { ...body, compare: 'size' });
    assert.deepEqual(bySize.counts, {
      total: 4,
      pending: 0,
      succeeded: 0,
      skipped: 4,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(String(await readS3(client, dst, 'touched.txt')), 'yy');
  });

  test('delete removes only what the source lacks, after every copy', async () => {
    const { call, a, b } = await setup();
    const src = await seedBucket(client, { 'p/keep.txt': 'keep', 'p/new.txt': 'new' });
    // Two of the four objects under q/ go: half, within the default max_delete.
    const dst = await seedBucket(client, {
      'q/keep.txt': 'keep-old',
      'q/new.txt': 'stale',
      'q/gone-1.txt': 'x',
      'q/dir/gone-2.txt': 'y',
      'elsewhere.txt': 'outside the prefix',
    });
    const before = proxy.seen.length;
    const job = await sync(call, { from: `${a}:${src}/p/`, to: `${b}:${dst}/q/`, delete: true });
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.equal(job.max_delete, undefined, 'shown only when given');
    assert.deepEqual(job.counts, {
      total: 4,
      pending: 0,
      succeeded: 2,
      skipped: 0,
      failed: 0,
      deleted: 2,
      size_only: 0,
    });
    assert.equal(String(await readS3(client, dst, 'q/keep.txt')), 'keep');
    assert.equal(String(await readS3(client, dst, 'q/new.txt')), 'new');
    assert.equal(await readS3(client, dst, 'q/gone-1.txt'), undefined);
    assert.equal(await readS3(client, dst, 'q/dir/gone-2.txt'), undefined);
    assert.equal(String(await readS3(client, dst, 'elsewhere.txt')), 'outside the prefix');
    const sent = proxy.seen.slice(before);
    const copies = sent.flatMap((r, i) => (r.method === 'PUT' && r.copySource ? [i] : []));
    const deletes = sent.flatMap((r, i) => (r.method === 'DELETE' ? [i] : []));
    assert.equal(copies.length, 2);
    assert.equal(deletes.length, 2);
    assert.ok(Math.max(...copies) < Math.min(...deletes), 'every copy before the first deletion');
  });

  test('a failed copy leaves the deletions undone, skipped with the reason', async () => {
    const { call, a, b } = await setup();
    const src = await seedBucket(client, { 'ok.txt': 'ok', 'broken.txt': 'broken' });
    const dst = await seedBucket(client, { 'extra.txt': 'extra' });
    proxy.failWhen((r) => r.method === 'PUT' && r.copySource && r.url.includes('broken.txt'), {
      status: 404,
      headers: { 'content-type': 'application/xml' },
      body: '<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>gone</Message></Error>',
    });
    const job = await sync(call, { from: `${a}:${src}/`, to: `${b}:${dst}/`, delete: true, max_delete: 1 });
    assert.equal(job.status, 'partial', JSON.stringify(job));
    assert.deepEqual(job.counts, {
      total: 3,
      pending: 0,
      succeeded: 1,
      skipped: 1,
      failed: 1,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(String(await readS3(client, dst, 'extra.txt')), 'extra', 'not removed');
    assert.deepEqual(await skippedReasons(String(job.job_id)), {
      'extra.txt': 'not removed: 1 copy of this sync failed',
    });
    const failures = (await call({ method: 'GET', url: `/v1/jobs/${job.job_id}/failures` })).json();
    // The failed copy, and the deletion left alone because of it (docs/api.md, "Polling": failures).
    assert.deepEqual(
      failures.failures.map((f: { key: string; outcome?: string }) => [f.key, f.outcome ?? 'failed']),
      [
        ['broken.txt', 'failed'],
        ['extra.txt', 'skipped'],
      ],
    );
  });

  test('a sync that would delete more than max_delete (by default half the destination) fails before changing anything, saying how to raise it', async () => {
    const { call, a, b } = await setup();
    const src = await seedBucket(client, { 'new.txt': 'new' });
    const dst = await seedBucket(client, { 'x1.txt': '1', 'x2.txt': '2', 'x3.txt': '3' });
    const body = { from: `${a}:${src}/`, to: `${b}:${dst}/`, delete: true };
    const job = await sync(call, body);
    assert.equal(job.status, 'failed', JSON.stringify(job));
    assert.equal(
      job.error,
      "planning failed: the sync would remove 3 of the 3 objects at the destination, more than max_delete (1: by default half the destination's objects, at most 1000); " +
        "nothing was copied or removed. If that is intended, give max_delete: 3 or more (on the sync, or in the schedule's action); the same sync retried stops here again",
    );
    for (const key of ['x1.txt', 'x2.txt', 'x3.txt']) assert.ok(await readS3(client, dst, key), key);
    assert.equal(await readS3(client, dst, 'new.txt'), undefined, 'nothing copied either');
    // As the error says, a retry stops at the same limit.
    const retried = await post(call, `/v1/jobs/${job.job_id}/retry`, {});
    assert.equal(retried.statusCode, 202, retried.body);
    const retriedJob = await waitFor(call, `/v1/jobs/${job.job_id}`);
    assert.equal(retriedJob.status, 'failed', JSON.stringify(retriedJob));
    assert.equal(retriedJob.error, job.error);
    const given = await sync(call, { ...body, max_delete: 2 });
    assert.match(
      String(given.error),
      /would remove 3 of the 3 objects .*more than max_delete \(2\); .*give max_delete: 3 or more/,
    );
    // Within the limit it goes through; max_delete 0 with nothing to delete is fine.
    const ok = await sync(call, { from: `${a}:${src}/`, to: `${b}:${dst}/`, delete: true, max_delete: 3 });
    assert.equal(ok.status, 'complete', JSON.stringify(ok));
    assert.equal((ok.counts as { deleted: number }).deleted, 3);
    const again = await sync(call, { from: `${a}:${src}/`, to: `${b}:${dst}/`, delete: true, max_delete: 0 });
    assert.equal(again.status, 'complete', JSON.stringify(again));
  });

  test('s3 to azure: a first sync copies, a second by size-modtime or by checksum skips everything', async () => {
    const { call, a, az } = await setup();
    const src = await seedBucket(client, { 'd/one.bin': randomBytes(5000), 'd/two.txt': 'two' });
    const container = unique('c').toLowerCase();
    await azure.createContainer(container);
    const body = { from: `${a}:${src}/d/`, to: `${az}:${container}/backup/` };
    const first = await sync(call, body);
    assert.equal(first.status, 'complete', JSON.stringify(first));
    assert.equal((first.counts as { succeeded: number }).succeeded, 2);
    assert.equal(String(await readAzure(azure, container, 'backup/two.txt')), 'two');
    const second = await sync(call, body);
    assert.equal((second.counts as { skipped: number }).skipped, 2, JSON.stringify(second));
    const before = proxy.seen.length;
    const third = await sync(call, { ...body, compare: 'checksum' });
    assert.equal(third.compare, 'checksum');
    assert.equal((third.counts as { skipped: number }).skipped, 2, JSON.stringify(third));
    assert.deepEqual(perObject(proxy.seen.slice(before)), []);
    assert.deepEqual(Object.values(await skippedReasons(String(third.job_id))), [
      'equal by checksum (md5)',
      'equal by checksum (md5)',
    ]);
    // A changed source object of the same size differs by checksum.
    await put(src, { 'd/two.txt': 'TWO' });
    const fourth = await sync(call, { ...body, compare: 'checksum' });
    assert.equal((fourth.counts as { succeeded: number }).succeeded, 1, JSON.stringify(fourth));
    assert.equal(String(await readAzure(azure, container, 'backup/two.txt')), 'TWO');
  });

  test('a filtered sync copies and deletes only what passes the filter; a glob without "/" at any depth', async () => {
    const { call, a, b } = await setup();
    const src = await seedBucket(client, {
      'keep.txt': 'k',
      'big.txt': 'x'.repeat(100),
      'logs/1.log': 'log',
      'skip.tmp': 't',
      'deep/er/skip.tmp': 't',
    });
    const dst = await seedBucket(client, {
      'old.txt': 'old',
      'logs/old.log': 'old log',
      'old.tmp': 'o',
      'deep/old.tmp': 'o',
    });
    const filter = { exclude: ['logs/**', '*.tmp'], max_size: 50 };
    // The one object passing the filter at the destination goes: all of it, so max_delete says so.
    const job = await sync(call, {
      from: `${a}:${src}/`,
      to: `${b}:${dst}/`,
      delete: true,
      max_delete: 1,
      filter,
    });
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.deepEqual(job.filter, filter);
    assert.deepEqual(job.counts, {
      total: 2,
      pending: 0,
      succeeded: 1,
      skipped: 0,
      failed: 0,
      deleted: 1,
      size_only: 0,
    });
    assert.equal(String(await readS3(client, dst, 'keep.txt')), 'k');
    assert.equal(await readS3(client, dst, 'big.txt'), undefined);
    assert.equal(await readS3(client, dst, 'old.txt'), undefined);
    assert.equal(String(await readS3(client, dst, 'logs/old.log')), 'old log', 'excluded: not deleted');
    assert.equal(String(await readS3(client, dst, 'old.tmp')), 'o');
    assert.equal(String(await readS3(client, dst, 'deep/old.tmp')), 'o', '*.tmp below the top: not deleted');
    assert.equal(await readS3(client, dst, 'deep/er/skip.tmp'), undefined, '*.tmp below the top: not copied');
  });

  test('a dry run is a plan: it changes nothing; its run copies and deletes exactly what it listed, leaving alone what changed or appeared since', async () => {
    const { call, a, b } = await setup();
    const src = await seedBucket(client, { 'same.txt': 'same', 'new.txt': 'new', 'later.txt': 'v1' });
    const dst = await seedBucket(client, { 'old.txt': 'old', 'kept-old.txt': 'kept' });
    // same.txt equal at the destination before the dry run (written after the source: size-modtime).
    await put(dst, { 'same.txt': 'same' });
    const body = { from: `${a}:${src}/`, to: `${b}:${dst}/`, delete: true, max_delete: 2 };
    const dry = await post(call, '/v1/sync', { ...body, dry_run: true });
    assert.equal(dry.statusCode, 200, dry.body);
    const plan = dry.json();
    assert.equal(plan.kind, 'sync');
    assert.deepEqual(plan.counts, { copy: 2, skip: 1, delete: 2 });
    const byKey = Object.fromEntries(
      plan.entries.map((e: { key: string; action: string }) => [e.key, e.action]),
    );
    assert.deepEqual(byKey, {
      'same.txt': 'skip',
      'new.txt': 'copy',
      'later.txt': 'copy',
      'old.txt': 'delete',
      'kept-old.txt': 'delete',
    });
    assert.equal(await readS3(client, dst, 'new.txt'), undefined, 'a dry run copies nothing');
    assert.equal(String(await readS3(client, dst, 'old.txt')), 'old', 'a dry run removes nothing');

    // Between the plan and its run: a planned copy changes, a source object appears, and a planned
    // deletion's object is rewritten at the destination with another size.
    await put(src, { 'later.txt': 'v2, longer', 'appeared.txt': 'appeared' });
    await put(dst, { 'kept-old.txt': 'rewritten since the plan' });

    const run = await post(call, `/v1/plans/${plan.plan_id}/run`, {});
    assert.equal(run.statusCode, 202, run.body);
    const job = await waitFor(call, `/v1/jobs/${run.json().job_id}`);
    assert.equal(job.kind, 'sync');
    assert.equal(job.plan_id, plan.plan_id);
    assert.equal(String(await readS3(client, dst, 'new.txt')), 'new', JSON.stringify(job));
    assert.equal(await readS3(client, dst, 'later.txt'), undefined, 'changed since the plan: not copied');
    assert.equal(await readS3(client, dst, 'appeared.txt'), undefined, 'not in the plan: not copied');
    assert.equal(await readS3(client, dst, 'old.txt'), undefined, 'planned deletion done');
    assert.equal(String(await readS3(client, dst, 'kept-old.txt')), 'rewritten since the plan');
    assert.deepEqual(job.counts, {
      total: 6,
      pending: 0,
      succeeded: 1,
      skipped: 4,
      failed: 0,
      deleted: 1,
      size_only: 0,
    });
    const reasons = await skippedReasons(String(job.job_id));
    assert.equal(reasons['same.txt'], 'equal at the destination when planned');
    assert.match(String(reasons['later.txt']), /^changed since the plan: size 2 → 10/);
    assert.equal(reasons['appeared.txt'], 'not in the plan');
    assert.match(String(reasons['kept-old.txt']), /^changed since the plan: size 4 → 24/);
    const again = await post(call, `/v1/plans/${plan.plan_id}/run`, {});
    assert.equal(again.statusCode, 409, again.body);
  });

  test('a dry run past max_delete is refused and keeps no plan', async () => {
    const { call, a, b } = await setup();
    const src = await seedBucket(client, { 'a.txt': 'a' });
    const dst = await seedBucket(client, { 'x.txt': 'x', 'y.txt': 'y' });
    const plans = async () => (await t.services.db.kysely.selectFrom('plans').select('id').execute()).length;
    const before = await plans();
    const dry = await post(call, '/v1/sync', {
      from: `${a}:${src}/`,
      to: `${b}:${dst}/`,
      delete: true,
      max_delete: 1,
      dry_run: true,
    });
    assert.equal(dry.statusCode, 409, dry.body);
    assert.match(
      dry.json().message,
      /would remove 2 of the 2 objects at the destination, more than max_delete \(1\)/,
    );
    assert.equal(await plans(), before, 'no plan kept');
    assert.equal(String(await readS3(client, dst, 'x.txt')), 'x');
  });

  test('a sync counts against the copy limit, in one bucket with copies; a refused one does not count', async () => {
    const { call, a, b } = await setup();
    const src = await seedBucket(client, {});
    const body = { from: `${a}:${src}/p/`, to: `${b}:${src}-none/q/` };
    assert.equal((await post(call, '/v1/sync', { ...body, compare: 'nope' })).statusCode, 400);
    for (let i = 0; i < 3; i++) assert.equal((await post(call, '/v1/copy', body)).statusCode, 202);
    for (let i = 0; i < 2; i++) assert.equal((await post(call, '/v1/sync', body)).statusCode, 202);
    const sync = await post(call, '/v1/sync', body);
    assert.equal(sync.statusCode, 429, sync.body);
    assert.ok(sync.headers['retry-after']);
    assert.equal((await post(call, '/v1/copy', body)).statusCode, 429);
  });

  test('bad compare, max_delete, delete and filters are 400 naming the field; checksum needs a common hash', async () => {
    const { call, a, b } = await setup();
    const from = `${a}:bucket/p/`;
    const to = `${b}:bucket2/q/`;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ compare: 'mtime' }, /compare/],
      [{ delete: true, max_delete: -1 }, /max_delete/],
      [{ delete: true, max_delete: 1.5 }, /max_delete/],
      [{ max_delete: 5 }, /max_delete applies only with delete: true/],
      [{ delete: 'yes' }, /delete/],
      [{ filter: { include: 'a' } }, /include/],
      [{ filter: { include: [''] } }, /include/],
      [{ filter: { exclude: ['/abs'] } }, /filter\.exclude\[0\] must not start with "\/"/],
      [{ filter: { include: ['x'.repeat(2000)] } }, /filter\.include\[0\].*FERRY_PATTERN_MAX_LENGTH/],
      [{ filter: { include: Array.from({ length: 101 }, () => '*') } }, /include/],
      [{ filter: { min_size: -1 } }, /min_size/],
      [{ filter: { min_size: 10, max_size: 5 } }, /filter\.min_size \(10\) is larger than filter\.max_size/],
      [{ filter: { modified_after: 'yesterday' } }, /filter\.modified_after must be an RFC 3339 time/],
      [
        { filter: { modified_after: '2026-01-02T00:00:00Z', modified_before: '2026-01-01T00:00:00Z' } },
        /modified_after must be earlier/,
      ],
      [{ filter: { other: 1 } }, /other|additional/],
      [{ from: `${a}:bucket/one.txt` }, /from must end with "\/" for a bulk copy/],
    ];
    for (const [extra, message] of cases) {
      const res = await post(call, '/v1/sync', { from, to, ...extra });
      assert.equal(res.statusCode, 400, `${JSON.stringify(extra)}: ${res.body}`);
      assert.match(res.json().message, message, JSON.stringify(extra));
    }
    const dbx = await createLocation(call, { provider: 'dropbox', secret: secretFor('dropbox') });
    const refused = await post(call, '/v1/sync', { from, to: `${dbx.id}:backup/`, compare: 'checksum' });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.match(refused.json().message, /compare checksum: the listings of s3 \(md5\) and dropbox \(none\)/);
  });
});
