// docs/api.md "Filters" through HTTP on both databases: a filter on a bulk copy, on a patterned move and
// remove and on their previews, with a worker in the process and s3rver behind a recording proxy.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { startTestApp, type TestApp } from '../support/app.js';
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

await eachDatabase('filters', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let proxy: FaultProxy;
  before(async () => {
    s3 = await startS3rver();
    proxy = await startFaultProxy(s3.endpoint);
    client = s3Client(s3.endpoint);
    t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' }, worker: true });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await proxy.close();
    await s3.close();
  });

  async function setup(): Promise<{ call: Call; a: string; label: string }> {
    const call = await newWorkspace(t);
    const loc = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKIDFILTER', secret_access_key: 'filter-secret' },
      metadata: { endpoint: proxy.url },
    });
    return { call, a: loc.id, label: loc.label };
  }

  const post = (call: Call, url: string, payload: Record<string, unknown>) =>
    call({ method: 'POST', url, payload });

  const TREE = {
    'p/a.txt': 'a',
    'p/big.txt': 'x'.repeat(500),
    'p/img/1.jpg': 'jpg',
    'p/logs/1.log': 'log',
    'p/logs/deep/2.log': 'log2',
    // s3rver leaves a folder holding only folders out of a delimited listing: one file in p/img keeps it.
  };

  test('a bulk copy with a filter copies what passes every rule; an excluded folder is never listed', async () => {
    const { call, a } = await setup();
    const src = await seedBucket(client, TREE);
    const dst = await seedBucket(client, {});
    const filter = { include: ['*.txt', 'img/**', 'logs/**'], exclude: ['logs/**'], max_size: 100 };
    const before = proxy.seen.length;
    const res = await post(call, '/v1/copy', { from: `${a}:${src}/p/`, to: `${a}:${dst}/q/`, filter });
    assert.equal(res.statusCode, 202, res.body);
    const job = await waitFor(call, `/v1/jobs/${res.json().job_id}`);
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.equal(job.kind, 'copy');
    assert.deepEqual(job.filter, filter);
    assert.deepEqual(job.counts, {
      total: 2,
      pending: 0,
      succeeded: 2,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(String(await readS3(client, dst, 'q/a.txt')), 'a');
    assert.equal(String(await readS3(client, dst, 'q/img/1.jpg')), 'jpg');
    assert.equal(await readS3(client, dst, 'q/big.txt'), undefined);
    assert.equal(await readS3(client, dst, 'q/logs/1.log'), undefined);
    const lists = proxy.seen.slice(before).filter((r) => r.url.includes('list-type=2'));
    assert.ok(lists.length >= 2, 'listed folder by folder');
    assert.deepEqual(
      lists.filter((r) => decodeURIComponent(r.url).includes('p/logs')),
      [],
      'p/logs/ was never listed',
    );
  });

  test('modified_after and modified_before on a bulk copy: the window holds the objects or not', async () => {
    const { call, a } = await setup();
    const src = await seedBucket(client, { 'p/one.txt': '1', 'p/two.txt': '2' });
    const dst = await seedBucket(client, {});
    const past = await post(call, '/v1/copy', {
      from: `${a}:${src}/p/`,
      to: `${a}:${dst}/old/`,
      filter: { modified_before: '2020-01-01T00:00:00Z' },
    });
    const none = await waitFor(call, `/v1/jobs/${past.json().job_id}`);
    assert.equal(none.status, 'complete', JSON.stringify(none));
    assert.equal((none.counts as { total: number }).total, 0);
    assert.deepEqual(none.filter, { modified_before: '2020-01-01T00:00:00.000Z' });
    const recent = await post(call, '/v1/copy', {
      from: `${a}:${src}/p/`,
      to: `${a}:${dst}/new/`,
      filter: { modified_after: new Date(Date.now() - 3_600_000).toISOString(), min_size: 1 },
    });
    const both = await waitFor(call, `/v1/jobs/${recent.json().job_id}`);
    assert.equal((both.counts as { succeeded: number }).succeeded, 2, JSON.stringify(both));
  });

  test('remove and its preview with a filter: only what passes is previewed, then removed', async () => {
    const { call, label } = await setup();
    const bucket = await seedBucket(client, TREE);
    const body = { path: `${label}/${bucket}/p/**`, filter: { exclude: ['logs/**', 'img/*'], min_size: 2 } };
    const preview = await post(call, '/remove/preview', body);
    assert.equal(preview.statusCode, 200, preview.body);
    assert.deepEqual(
      preview.json().entries.map((e: { path: string }) => e.path),
      [`${bucket}/p/big.txt`],
    );
    const res = await post(call, '/remove', body);
    assert.equal(res.statusCode, 202, res.body);
    const done = await waitFor(call, `/v1/transfers/${res.json().id}`);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.equal((done.counts as { total: number }).total, 1);
    assert.equal(await readS3(client, bucket, 'p/big.txt'), undefined);
    for (const key of ['p/a.txt', 'p/img/1.jpg', 'p/logs/1.log', 'p/logs/deep/2.log'])
      assert.ok(await readS3(client, bucket, key), `${key} kept`);
  });

  test('move and its preview with a filter: globs relative to the pattern base', async () => {
    const { call, label } = await setup();
    const bucket = await seedBucket(client, TREE);
    const body = {
      from: `${label}/${bucket}/p/**`,
      to: `${label}/${bucket}/moved/`,
      filter: { include: ['logs/**'], exclude: ['logs/deep/**'] },
    };
    const preview = await post(call, '/move/preview', body);
    assert.equal(preview.statusCode, 200, preview.body);
    assert.deepEqual(preview.json().entries, [
      { from: `${label}/${bucket}/p/logs/1.log`, to: `${label}/${bucket}/moved/logs/1.log` },
    ]);
    const res = await post(call, '/move', body);
    assert.equal(res.statusCode, 202, res.body);
    const done = await waitFor(call, `/v1/transfers/${res.json().id}`);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.equal(String(await readS3(client, bucket, 'moved/logs/1.log')), 'log');
    assert.equal(await readS3(client, bucket, 'p/logs/1.log'), undefined);
    assert.equal(String(await readS3(client, bucket, 'p/logs/deep/2.log')), 'log2');
  });

  test('a filter where it does not apply, or a bad one, is 400 naming the field', async () => {
    const { call, a, label } = await setup();
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['/v1/copy', { from: `${a}:b/k.txt`, to: `${a}:c/k.txt`, filter: {} }, /filter applies only to a bulk/],
      [
        '/v1/copy',
        { from: `${a}:b/p/`, to: `${a}:c/q/`, manifest: ['k'], filter: { min_size: 1 } },
        /filter applies to a listed prefix, not to a manifest/,
      ],
      ['/v1/copy', { from: `${a}:b/p/`, to: `${a}:c/q/`, filter: { max_size: -2 } }, /max_size/],
      [
        '/v1/copy',
        { from: `${a}:b/p/`, to: `${a}:c/q/`, filter: { include: ['*x'.repeat(40)] } },
        /filter\.include\[0\]: .*FERRY_PATTERN_MAX_WILDCARDS/,
      ],
      ['/remove', { path: `${label}/b/k.txt`, filter: { min_size: 1 } }, /filter applies only to patterned/],
      ['/remove/preview', { path: `${label}/b/*`, filter: { modified_after: 'soon' } }, /modified_after/],
      [
        '/move',
        { from: `${label}/b/k.txt`, to: `${label}/c/`, filter: {} },
        /filter applies only to patterned/,
      ],
      [
        '/move/preview',
        { from: `${label}/b/*`, to: `${label}/c/`, filter: { exclude: ['/x'] } },
        /exclude\[0\]/,
      ],
      [
        '/v1/sync',
        { from: `${a}:b/p/`, to: `${a}:c/q/`, filter: { include: ['a\u0000b'] } },
        /filter\.include\.0 must not contain U\+0000/,
      ],
      [
        '/v1/copy',
        { from: `${a}:b/p/`, to: `${a}:c/q/`, filter: { modified_before: '2027-01-01T00:00:00Z\u0000' } },
        /modified_before must not contain control characters/,
      ],
    ];
    for (const [url, payload, message] of cases) {
      const res = await post(call, url, payload);
      assert.equal(res.statusCode, 400, `${url} ${JSON.stringify(payload)}: ${res.body}`);
      assert.match(res.json().message, message, `${url} ${JSON.stringify(payload)}`);
    }
  });
});
