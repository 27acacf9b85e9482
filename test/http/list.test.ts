// docs/api.md "Listing objects" through HTTP on s3rver (data seeded with the AWS SDK, not with
// ferry), on both databases: bucket listing and hint, folders and files, recursion, 404s, and what provider failures
// do to the answer and to the location's status.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startTestApp, type TestApp } from '../support/app.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { REJECTED_ACCESS_KEY_ID, type S3rverHandle, startS3rver } from '../support/s3rver.js';

interface Entry {
  name: string;
  path: string;
  size: number;
  isDir: boolean;
  mimeType?: string;
  modTime?: string;
}

const OBJECTS: Record<string, string> = {
  'top.txt': 'top',
  'docs/a.txt': 'aaaa',
  'docs/b c.txt': 'bb',
  'docs/deep/é ü.md': 'deep!',
  'empty.bin': '',
};

await eachDatabase('POST /v1/list on s3rver', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let proxy: FaultProxy;
  let bucket: string;
  before(async () => {
    s3 = await startS3rver();
    proxy = await startFaultProxy(s3.endpoint);
    t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' } });
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'seed', secretAccessKey: 'seed' },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    bucket = unique('list').toLowerCase();
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    await client.send(new CreateBucketCommand({ Bucket: `${bucket}-empty` }));
    for (const [key, body] of Object.entries(OBJECTS)) {
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'text/plain' }),
      );
    }
    client.destroy();
  });
  after(async () => {
    await t.close();
    await proxy.close();
    await s3.close();
  });

  const location = async (endpoint: string, accessKey = 'AKIDFERRY') => {
    const res = await t.request({
      method: 'POST',
      url: '/v1/locations',
      payload: {
        provider: 's3',
        label: unique('s3'),
        secret: { access_key_id: accessKey, secret_access_key: unique('secret') },
        metadata: { endpoint },
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };
  const list = (id: string, extra: Record<string, unknown> = {}) =>
    t.request({ method: 'POST', url: '/v1/list', payload: { id, ...extra } });
  const entries = (res: { json(): unknown }) => (res.json() as { entries: Entry[] }).entries;

  test('an empty path lists buckets with size -1 and a hint', async () => {
    const id = await location(s3.endpoint);
    for (const extra of [{}, { path: '' }]) {
      const res = await list(id, extra);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.match(body.hint, /bucket/);
      const mine = (body.entries as Entry[]).find((e) => e.name === bucket);
      assert.ok(mine, 'the bucket is listed');
      assert.equal(mine.path, bucket);
      assert.equal(mine.size, -1);
      assert.equal(mine.isDir, true);
    }
  });

  test('a bucket path lists its immediate children: folders with size 0, files with size and RFC 3339 modTime; no hint', async () => {
    const id = await location(s3.endpoint);
    const res = await list(id, { path: bucket });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().hint, undefined);
    const got = entries(res).sort((a, b) => a.path.localeCompare(b.path));
    assert.deepEqual(
      got.map((e) => [e.name, e.path, e.size, e.isDir]),
      [
        ['docs', `${bucket}/docs`, 0, true],
        ['empty.bin', `${bucket}/empty.bin`, 0, false],
        ['top.txt', `${bucket}/top.txt`, 3, false],
      ],
    );
    const file = got.find((e) => e.name === 'top.txt');
    assert.match(String(file?.modTime), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    assert.ok(Math.abs(Date.parse(String(file?.modTime)) - Date.now()) < 5 * 60_000);
  });

  test('bucket/folder goes deeper, with or without a trailing slash, and names need no escaping', async () => {
    const id = await location(s3.endpoint);
    for (const path of [`${bucket}/docs`, `${bucket}/docs/`]) {
      const res = await list(id, { path });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(
        entries(res)
          .map((e) => [e.name, e.path, e.size, e.isDir])
          .sort(),
        [
          ['a.txt', `${bucket}/docs/a.txt`, 4, false],
          ['b c.txt', `${bucket}/docs/b c.txt`, 2, false],
          ['deep', `${bucket}/docs/deep`, 0, true],
        ].sort(),
      );
    }
  });

  test('recurse lists every object and every folder between the bucket and it, once', async () => {
    const id = await location(s3.endpoint);
    const res = await list(id, { path: bucket, recurse: true });
    assert.equal(res.statusCode, 200, res.body);
    const paths = entries(res)
      .map((e) => `${e.path}${e.isDir ? '/' : ''}`)
      .sort();
    assert.deepEqual(
      paths,
      ['docs/', 'docs/a.txt', 'docs/b c.txt', 'docs/deep/', 'docs/deep/é ü.md', 'empty.bin', 'top.txt'].map(
        (p) => `${bucket}/${p}`,
      ),
    );
  });

  test('an empty bucket lists no entries; a missing bucket or folder is 404; paths are case-sensitive', async () => {
    const id = await location(s3.endpoint);
    const empty = await list(id, { path: `${bucket}-empty` });
    assert.equal(empty.statusCode, 200);
    assert.deepEqual(entries(empty), []);
    for (const path of [`${bucket}-missing`, `${bucket}/nope`, `${bucket}/DOCS`, bucket.toUpperCase()]) {
      const res = await list(id, { path });
      assert.equal(res.statusCode, 404, `${path}: ${res.body}`);
      assert.equal(res.json().error, 404);
    }
  });

  test('bad paths and bodies are 400', async () => {
    const id = await location(s3.endpoint);
    for (const extra of [
      { path: `${bucket}//docs` },
      { path: `${bucket}/../x` },
      { recurse: 'yes' },
      { path: 7 },
      { depth: 2 },
    ]) {
      const res = await list(id, extra);
      assert.equal(res.statusCode, 400, `${JSON.stringify(extra)}: ${res.body}`);
    }
    const noTarget = await t.request({ method: 'POST', url: '/v1/list', payload: { path: bucket } });
    assert.equal(noTarget.statusCode, 400);
  });

  test('rejected credentials answer 409 and mark the location failed with the reason', async () => {
    const id = await location(s3.endpoint, REJECTED_ACCESS_KEY_ID);
    const res = await list(id, { path: bucket });
    assert.equal(res.statusCode, 409, res.body);
    const status = (await t.request({ method: 'POST', url: '/v1/locations/status', payload: { id } })).json();
    assert.equal(status.status, 'failed');
    assert.match(status.failure_reason, /InvalidAccessKeyId/);
    const summary = (await t.request({ method: 'GET', url: '/v1/locations' }))
      .json()
      .find((l: { id: string }) => l.id === id);
    assert.match(summary.validation_error, /InvalidAccessKeyId/);
  });

  test('a throttling provider answers 503 with Retry-After and leaves the location active', async () => {
    const id = await location(proxy.url);
    proxy.failNext(1, {
      status: 503,
      headers: { 'content-type': 'application/xml', 'retry-after': '7' },
      body: '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>',
    });
    const res = await list(id, { path: bucket });
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.headers['retry-after'], '7');
    const status = (await t.request({ method: 'POST', url: '/v1/locations/status', payload: { id } })).json();
    assert.equal(status.status, 'active');
  });

  test('a throttling provider that names no wait answers 503 with Retry-After 5', async () => {
    const id = await location(proxy.url);
    proxy.failNext(1, {
      status: 503,
      headers: { 'content-type': 'application/xml' },
      body: '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>',
    });
    const res = await list(id, { path: bucket });
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.headers['retry-after'], '5');
  });

  test('an unreachable provider answers 502 and leaves the location active', async () => {
    const closed = await startFaultProxy(s3.endpoint);
    const url = closed.url;
    await closed.close();
    const id = await location(url);
    const res = await list(id, { path: bucket });
    assert.equal(res.statusCode, 502, res.body);
    assert.equal(
      (await t.request({ method: 'POST', url: '/v1/locations/status', payload: { id } })).json().status,
      'active',
    );
  });

  test('an endpoint on a non-public address is refused unless FERRY_EGRESS_ALLOW names it', async () => {
    const guarded = await startTestApp(database);
    try {
      const created = await guarded.request({
        method: 'POST',
        url: '/v1/locations',
        payload: {
          provider: 's3',
          label: 'internal',
          secret: { access_key_id: 'a', secret_access_key: 'b' },
          metadata: { endpoint: s3.endpoint },
        },
      });
      const res = await guarded.request({
        method: 'POST',
        url: '/v1/list',
        payload: { id: created.json().id, path: bucket },
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().message, /egress|not allowed/);
    } finally {
      await guarded.close();
    }
  });
});
