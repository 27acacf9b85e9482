// docs/api.md "Move, remove, pull" through HTTP on both databases: the accept rules,
// and what arrives (or is gone) once the worker has run, on s3rver and an HTTP server of our own.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { startTestApp, type TestApp } from '../support/app.js';
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

await eachDatabase('move, remove, pull', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let web: Server;
  let origin: string;
  /** /flaky answers 404 until a test sets this. */
  let flakyServes = false;
  const files: Record<string, Buffer> = {
    '/files/report.pdf': randomBytes(50_000),
    '/files/notes.txt': Buffer.from('notes'),
  };
  before(async () => {
    s3 = await startS3rver();
    client = s3Client(s3.endpoint);
    web = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      if (path === '/flaky' && flakyServes) {
        res.writeHead(200, { 'content-length': 5 }).end('flaky');
        return;
      }
      if (path === '/redirect') {
        res.writeHead(302, { location: '/files/notes.txt' }).end();
        return;
      }
      const body = files[path];
      if (!body) {
        res.writeHead(404).end('no');
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length })
        .end(body);
    });
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
    t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' }, worker: true });
  });
  after(async () => {
    await t.close();
    client.destroy();
    web.close();
    await s3.close();
  });

  async function setup(): Promise<{ call: Call; loc: string; label: string }> {
    const call = await newWorkspace(t);
    const { id, label } = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKIDOPS', secret_access_key: 'ops-secret' },
      metadata: { endpoint: s3.endpoint },
    });
    return { call, loc: id, label };
  }

  test('move answers 202 queued; afterwards the file exists only at the destination', async () => {
    const { call, label } = await setup();
    const bucket = await seedBucket(client, { 'in/a.txt': 'A' });
    const res = await call({
      method: 'POST',
      url: '/move',
      payload: { from: `${label}/${bucket}/in/a.txt`, to: `${label}/${bucket}/out/b.txt` },
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(Object.keys(res.json()).sort(), ['id', 'status']);
    assert.equal(res.json().status, 'queued');
    const done = await waitFor(call, `/v1/transfers/${res.json().id}`);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.equal(done.kind, 'move');
    assert.equal(done.from, `${label}/${bucket}/in/a.txt`, 'from and to as given');
    assert.equal(done.to, `${label}/${bucket}/out/b.txt`);
    // Copied (server-side), verified, then deleted: its copy proven as a copy's (docs/api.md, "Polling").
    assert.deepEqual([done.verified, done.verified_by], ['checksum', 'md5']);
    assert.equal(String(await readS3(client, bucket, 'out/b.txt')), 'A');
    assert.equal(await readS3(client, bucket, 'in/a.txt'), undefined);
  });

  test('a pattern or several sources move into a destination folder, keeping paths below the pattern base', async () => {
    const { call, loc } = await setup();
    const bucket = await seedBucket(client, {
      'src/x.log': 'x',
      'src/deep/y.log': 'y',
      'src/keep.txt': 'k',
      'other.log': 'o',
    });
    const res = await call({
      method: 'POST',
      url: '/move',
      payload: {
        from: [`${loc}/${bucket}/src/**/*.log`, `${loc}/${bucket}/other.log`],
        to: `${loc}/${bucket}/logs/`,
      },
    });
    assert.equal(res.statusCode, 202, res.body);
    const moved = await waitFor(call, `/v1/transfers/${res.json().id}`);
    assert.equal(moved.status, 'complete');
    assert.deepEqual(moved.from, [`${loc}/${bucket}/src/**/*.log`, `${loc}/${bucket}/other.log`]);
    assert.equal(moved.to, `${loc}/${bucket}/logs/`);
    assert.equal(String(await readS3(client, bucket, 'logs/x.log')), 'x');
    assert.equal(String(await readS3(client, bucket, 'logs/deep/y.log')), 'y');
    assert.equal(String(await readS3(client, bucket, 'logs/other.log')), 'o');
    assert.equal(String(await readS3(client, bucket, 'src/keep.txt')), 'k');
    assert.equal(await readS3(client, bucket, 'src/x.log'), undefined);
    const needsFolder = await call({
      method: 'POST',
      url: '/move',
      payload: { from: `${loc}/${bucket}/src/*.txt`, to: `${loc}/${bucket}/one.txt` },
    });
    assert.equal(needsFolder.statusCode, 400);
  });

  test('move and remove reject bad bodies: unknown fields, folders as sources, unknown locations', async () => {
    const { call, loc, label } = await setup();
    const cases: Array<[string, Record<string, unknown>, number]> = [
      ['/move', { from: `${loc}/b/a.txt`, to: `${loc}/b/c.txt`, overwrite: 'never' }, 400],
      ['/move', { from: `${loc}/b/dir/`, to: `${loc}/b/x/` }, 400],
      ['/move', { from: [], to: `${loc}/b/x/` }, 400],
      ['/move', { from: `${loc}/b/a.txt` }, 400],
      ['/move', { from: `nobody-here/b/a.txt`, to: `${loc}/b/c.txt` }, 404],
      ['/move', { from: `${label}/b/a.txt`, to: `${label}/b/a.txt` }, 400],
      ['/move', { from: `${loc}/*.txt`, to: `${loc}/b/x/` }, 400],
      ['/remove', { path: `${loc}/b/a.txt`, dryRun: true }, 400],
      ['/remove', { paths: `${loc}/b/a.txt` }, 400],
      ['/remove', { path: `${loc}/b/../a.txt` }, 400],
      ['/remove/preview', { path: [] }, 400],
    ];
    for (const [url, payload, status] of cases) {
      const res = await call({ method: 'POST', url, payload });
      assert.equal(res.statusCode, status, `${url} ${JSON.stringify(payload)}: ${res.body}`);
    }
  });

  test('remove preview lists what would go and removes nothing; remove then removes exactly that', async () => {
    const { call, label } = await setup();
    const bucket = await seedBucket(client, { 'tmp/a.tmp': 'a', 'tmp/sub/b.tmp': 'bb', 'tmp/c.txt': 'c' });
    const preview = await call({
      method: 'POST',
      url: '/remove/preview',
      payload: { path: `${label}/${bucket}/tmp/**/*.tmp` },
    });
    assert.equal(preview.statusCode, 200, preview.body);
    const entries = preview.json().entries as Array<{
      name: string;
      path: string;
      size: number;
      isDir: boolean;
    }>;
    assert.deepEqual(entries.map((e) => [e.path, e.size, e.isDir]).sort(), [
      [`${bucket}/tmp/a.tmp`, 1, false],
      [`${bucket}/tmp/sub/b.tmp`, 2, false],
    ]);
    assert.equal(String(await readS3(client, bucket, 'tmp/a.tmp')), 'a', 'preview removed nothing');
    const res = await call({
      method: 'POST',
      url: '/remove',
      payload: { path: `${label}/${bucket}/tmp/**/*.tmp` },
    });
    assert.equal(res.statusCode, 202, res.body);
    const done = await waitFor(call, `/v1/transfers/${res.json().id}`);
    assert.equal(done.status, 'complete');
    assert.equal(done.kind, 'remove');
    assert.equal(done.from, `${label}/${bucket}/tmp/**/*.tmp`);
    assert.ok(!('to' in done), 'a remove has no to');
    assert.equal(await readS3(client, bucket, 'tmp/a.tmp'), undefined);
    assert.equal(await readS3(client, bucket, 'tmp/sub/b.tmp'), undefined);
    assert.equal(String(await readS3(client, bucket, 'tmp/c.txt')), 'c');
  });

  test('two plain sources with one name moved into one folder are 400: one would overwrite the other', async () => {
    const { call, label } = await setup();
    const bucket = await seedBucket(client, { 'a/x.txt': 'A', 'b/x.txt': 'B' });
    const res = await call({
      method: 'POST',
      url: '/move',
      payload: {
        from: [`${label}/${bucket}/a/x.txt`, `${label}/${bucket}/b/x.txt`],
        to: `${label}/${bucket}/out/`,
      },
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json().message, /two files called "x\.txt".*both would land on .*out\/x\.txt/);
    assert.equal(String(await readS3(client, bucket, 'a/x.txt')), 'A', 'nothing moved');
  });

  test('one path on two locations is two objects of one removal: both go, counted as two', async () => {
    const { call, label } = await setup();
    const other = await startS3rver();
    const otherClient = s3Client(other.endpoint);
    try {
      const second = await createLocation(call, {
        provider: 's3',
        secret: { access_key_id: 'AKIDOPS2', secret_access_key: 'ops-secret-2' },
        metadata: { endpoint: other.endpoint },
      });
      const bucket = await seedBucket(client, { 'x.txt': 'one' });
      await otherClient.send(new CreateBucketCommand({ Bucket: bucket }));
      await otherClient.send(new PutObjectCommand({ Bucket: bucket, Key: 'x.txt', Body: 'two' }));
      const res = await call({
        method: 'POST',
        url: '/remove',
        payload: { path: [`${label}/${bucket}/x.txt`, `${second.label}/${bucket}/x.txt`] },
      });
      assert.equal(res.statusCode, 202, res.body);
      const done = await waitFor(call, `/v1/transfers/${res.json().id}`);
      assert.equal(done.status, 'complete', JSON.stringify(done));
      assert.equal((done.counts as { total: number; succeeded: number }).total, 2);
      assert.equal((done.counts as { total: number; succeeded: number }).succeeded, 2);
      assert.equal(await readS3(client, bucket, 'x.txt'), undefined);
      assert.equal(
        await readS3(otherClient, bucket, 'x.txt'),
        undefined,
        "the second location's file went too",
      );
    } finally {
      otherClient.destroy();
      await other.close();
    }
  });

  test('removing a file that does not exist fails the transfer; a preview of it is 404', async () => {
    const { call, label } = await setup();
    const bucket = await seedBucket(client, {});
    const preview = await call({
      method: 'POST',
      url: '/remove/preview',
      payload: { path: `${label}/${bucket}/ghost.txt` },
    });
    assert.equal(preview.statusCode, 404, preview.body);
    const res = await call({
      method: 'POST',
      url: '/remove',
      payload: { path: [`${label}/${bucket}/ghost.txt`] },
    });
    const done = await waitFor(call, `/v1/transfers/${res.json().id}`);
    assert.equal(done.status, 'failed');
    assert.ok(done.error);
  });

  test('pull answers 200 with the transfer and fetches the file server side; several URLs land in a folder', async () => {
    const { call, label } = await setup();
    const bucket = await seedBucket(client, {});
    const res = await call({
      method: 'POST',
      url: '/pull',
      payload: { from: `${origin}/files/report.pdf`, to: `${label}/${bucket}/in/report.pdf` },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(Object.keys(res.json()).sort(), ['id', 'status']);
    const done = await waitFor(call, `/v1/transfers/${res.json().id}`);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.equal(done.kind, 'pull');
    assert.equal(done.bytes_done, 50_000);
    assert.equal(done.bytes_total, 50_000);
    assert.equal(done.from, `${origin}/files/report.pdf`);
    assert.equal(done.to, `${label}/${bucket}/in/report.pdf`);
    // The store's write compared the MD5 it sent with the one s3rver stored (docs/api.md, "Polling").
    assert.deepEqual([done.verified, done.verified_by], ['checksum', 'md5']);
    assert.deepEqual(await readS3(client, bucket, 'in/report.pdf'), files['/files/report.pdf']);
    const several = await call({
      method: 'POST',
      url: '/pull',
      payload: { from: [`${origin}/files/notes.txt`, `${origin}/redirect`], to: `${label}/${bucket}/many/` },
    });
    const many = await waitFor(call, `/v1/transfers/${several.json().id}`);
    assert.equal(many.status, 'complete');
    // Over several objects, each object's report line says it; the transfer counts size_only instead.
    assert.equal(many.verified, undefined, JSON.stringify(many));
    assert.equal((many.counts as { size_only: number }).size_only, 0);
    assert.equal(String(await readS3(client, bucket, 'many/notes.txt')), 'notes');
    const notFolder = await call({
      method: 'POST',
      url: '/pull',
      payload: { from: [`${origin}/files/notes.txt`, `${origin}/x`], to: `${label}/${bucket}/one.txt` },
    });
    assert.equal(notFolder.statusCode, 400);
  });

  test('a pull of two URLs, one bad, writes the good one, counts both, fails saying 1 of 2, lists the failure, and retries it', async () => {
    const { call, label } = await setup();
    const bucket = await seedBucket(client, {});
    const res = await call({
      method: 'POST',
      url: '/pull',
      payload: { from: [`${origin}/files/report.pdf`, `${origin}/flaky`], to: `${label}/${bucket}/p/` },
    });
    assert.equal(res.statusCode, 200, res.body);
    const url = `/v1/transfers/${res.json().id}`;
    const done = await waitFor(call, url);
    assert.equal(done.status, 'failed', JSON.stringify(done));
    assert.equal(done.error, '1 of 2 objects failed');
    assert.deepEqual(done.counts, {
      total: 2,
      pending: 0,
      succeeded: 1,
      skipped: 0,
      failed: 1,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(done.bytes_done, 50_000);
    assert.deepEqual(await readS3(client, bucket, 'p/report.pdf'), files['/files/report.pdf']);
    const failures = await call({ method: 'GET', url: `${url}/failures` });
    assert.equal(failures.statusCode, 200, failures.body);
    assert.deepEqual(
      failures.json().failures.map((f: { key: string }) => f.key),
      [`${origin}/flaky`],
    );
    assert.match(failures.json().failures[0].error, /404/);
    flakyServes = true;
    const retry = await call({ method: 'POST', url: `${url}/retry` });
    assert.equal(retry.statusCode, 202, retry.body);
    assert.deepEqual(retry.json(), { id: res.json().id, status: 'queued' });
    const again = await waitFor(call, url);
    assert.equal(again.status, 'complete', JSON.stringify(again));
    assert.deepEqual(again.counts, {
      total: 2,
      pending: 0,
      succeeded: 2,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(String(await readS3(client, bucket, 'p/flaky')), 'flaky');
    const twice = await call({ method: 'POST', url: `${url}/retry` });
    assert.equal(twice.statusCode, 409, 'only a failed transfer is retried');
    const jobs = (await call({ method: 'GET', url: '/v1/jobs' })).json().jobs;
    assert.deepEqual(jobs, [], "a transfer's job is not listed as a job");
  });

  test('a prefix move runs object by object: counts say what was done', async () => {
    const { call, label } = await setup();
    const seeded: Record<string, string> = {};
    for (let i = 0; i < 12; i++) seeded[`src/d${i % 3}/f${i}.txt`] = `file ${i}`;
    const bucket = await seedBucket(client, seeded);
    const res = await call({
      method: 'POST',
      url: '/move',
      payload: { from: `${label}/${bucket}/src/**`, to: `${label}/${bucket}/dst/` },
    });
    assert.equal(res.statusCode, 202, res.body);
    const done = await waitFor(call, `/v1/transfers/${res.json().id}`);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.deepEqual(done.counts, {
      total: 12,
      pending: 0,
      succeeded: 12,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    for (let i = 0; i < 12; i++) {
      assert.equal(String(await readS3(client, bucket, `dst/d${i % 3}/f${i}.txt`)), `file ${i}`);
      assert.equal(await readS3(client, bucket, `src/d${i % 3}/f${i}.txt`), undefined);
    }
  });

  test('pull refuses non-http URLs and hosts that egress does not allow with 400; a URL that 404s fails the transfer', async () => {
    const { call, label } = await setup();
    const bucket = await seedBucket(client, {});
    for (const from of [
      'ftp://example.com/x',
      'file:///etc/passwd',
      'not a url',
      'http://user:pass@example.com/x',
    ]) {
      const res = await call({ method: 'POST', url: '/pull', payload: { from, to: `${label}/${bucket}/x` } });
      assert.equal(res.statusCode, 400, `${from}: ${res.body}`);
      assert.equal(res.json().error, 400);
    }
    const guarded = await startTestApp(database);
    try {
      const wcall = await newWorkspace(guarded);
      const loc = await createLocation(wcall, {
        provider: 's3',
        secret: { access_key_id: 'a', secret_access_key: 'b' },
        metadata: { endpoint: 'https://s3.example.com' },
      });
      for (const from of [
        `${origin}/files/notes.txt`,
        'http://10.1.2.3/x',
        'http://[::1]/x',
        'http://169.254.169.254/latest/meta-data/',
      ]) {
        const res = await wcall({
          method: 'POST',
          url: '/pull',
          payload: { from, to: `${loc.id}/bucket/x` },
        });
        assert.equal(res.statusCode, 400, `${from}: ${res.body}`);
      }
    } finally {
      await guarded.close();
    }
    const missing = await call({
      method: 'POST',
      url: '/pull',
      payload: { from: `${origin}/nothing`, to: `${label}/${bucket}/x` },
    });
    assert.equal(missing.statusCode, 200);
    const done = await waitFor(call, `/v1/transfers/${missing.json().id}`);
    assert.equal(done.status, 'failed');
    assert.match(String(done.error), /404|not found/i);
  });
});
