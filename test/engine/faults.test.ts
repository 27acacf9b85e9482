// Issue 4, "How it is tested": faults from the stores. A worker runs in the process (as in
// test/http/copy.test.ts); the source location's requests go through the fault proxy in front of
// s3rver, which answers 503 SlowDown with Retry-After, or cuts a connection in the middle of an
// object's bytes; the destination is another account on the same s3rver, so every object is
// streamed (GET from the source, PUT to the destination) and the bytes that arrive are compared.
//
// Backoff grows to seconds: the test that exhausts every attempt runs on a clock it moves forward to
// each object's retry time, instead of sleeping through the waits.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { MAX_ATTEMPTS } from '../../src/queue/backoff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { SkippingClock } from '../support/clock.js';
import { type FaultAnswer, type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
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

const slowDown = (retryAfter: string): FaultAnswer => ({
  status: 503,
  headers: { 'content-type': 'application/xml', 'retry-after': retryAfter },
  body: '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><RequestId>FAULT</RequestId></Error>',
});

/**
 * A pass-through in front of `target` that calls `inspect` with each request before forwarding it, so
 * that a test can arm a fault for one particular request (the fault proxy's faults apply to the next
 * requests in arrival order, whatever they are). A cut upstream is passed on as a cut.
 */
async function startGate(
  target: string,
  inspect: (req: http.IncomingMessage) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const agent = new http.Agent({ keepAlive: false });
  const server = http.createServer((req, res) => {
    inspect(req);
    const forward = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.on('close', () => {
          if (!answer.complete) res.destroy();
        });
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

await eachDatabase('faults from the stores', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let proxy: FaultProxy;
  let gate: Awaited<ReturnType<typeof startGate>>;
  let client: S3Client;
  const clock = new SkippingClock();
  /** Keys whose next GET the fault proxy cuts mid-body (once each). */
  const cutNextGet = new Set<string>();

  before(async () => {
    s3 = await startS3rver();
    proxy = await startFaultProxy(s3.endpoint);
    gate = await startGate(proxy.url, (req) => {
      const key = decodeURIComponent(
        new URL(req.url ?? '/', 'http://x').pathname.split('/').slice(2).join('/'),
      );
      if (req.method === 'GET' && cutNextGet.delete(key)) proxy.dropNext(1);
    });
    client = s3Client(s3.endpoint);
    t = await startTestApp(database, {
      clock,
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' },
      worker: { pollMs: 50 },
    });
  });
  after(async () => {
    await t?.close();
    client?.destroy();
    await gate?.close();
    await proxy?.close();
    await s3?.close();
  });

  /** A workspace with a source location behind the faults and a destination on another account. */
  async function setup(): Promise<{ call: Call; src: string; dst: string }> {
    proxy.reset();
    cutNextGet.clear();
    const call = await newWorkspace(t);
    const src = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'FAULTYSRC', secret_access_key: 'faulty-src' },
      metadata: { endpoint: gate.url },
    });
    const dst = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'HEALTHYDST', secret_access_key: 'healthy-dst' },
      metadata: { endpoint: s3.endpoint },
    });
    return { call, src: src.id, dst: dst.id };
  }

  async function objectRows(jobId: string) {
    return t.services.db.kysely
      .selectFrom('job_objects')
      .selectAll()
      .where('job_id', '=', jobId)
      .orderBy('seq')
      .execute();
  }

  async function copyJob(call: Call, payload: Record<string, unknown>): Promise<string> {
    const res = await call({ method: 'POST', url: '/v1/copy', payload });
    assert.equal(res.statusCode, 202, res.body);
    return res.json().job_id;
  }

  test('503 SlowDown with Retry-After for a while: every object waits what was asked, then the job completes', async () => {
    const { call, src, dst } = await setup();
    const objects = {
      'p/a.bin': randomBytes(40_000),
      'p/b.bin': randomBytes(50_000),
      'p/c.bin': randomBytes(1),
    };
    const bucket = await seedBucket(client, objects);
    // The three objects' first requests (their stats, sent at once) are throttled; the provider asks
    // for 2 s, which is more than the first backoff (0.5-1 s) would wait by itself. The clock stands
    // still, so the failures happen at the instant `throttledAt` and each wait reads exactly.
    proxy.failNext(3, slowDown('2'));
    clock.freeze();
    let job: Awaited<ReturnType<typeof waitFor>>;
    let id: string;
    try {
      const throttledAt = clock.now();
      id = await copyJob(call, {
        from: `${src}:${bucket}/p/`,
        to: `${dst}:${bucket}/q/`,
        manifest: ['a.bin', 'b.bin', 'c.bin'],
      });
      const waiting = await waitUntil(
        async () => {
          const rows = await objectRows(id);
          const waits = rows.length === 3 && rows.every((r) => r.status === 'pending' && r.attempts === 1);
          return waits ? rows : undefined;
        },
        { what: 'the three throttled objects to wait' },
      );
      for (const row of waiting) {
        assert.match(String(row.error), /HTTP 503/, 'a HEAD answer has no body to name SlowDown');
        assert.equal(Number(row.run_after) - throttledAt, 2000, `${row.key} waits what Retry-After asked`);
      }
      clock.skipTo(throttledAt + 2000);
      t.worker?.nudge();
      job = await waitFor(call, `/v1/jobs/${id}`);
    } finally {
      clock.thaw();
    }
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.deepEqual(job.counts, {
      total: 3,
      pending: 0,
      succeeded: 3,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    const rows = await objectRows(id);
    assert.deepEqual(
      rows.map((r) => [r.key, r.attempts, r.error]),
      [
        ['a.bin', 2, null],
        ['b.bin', 2, null],
        ['c.bin', 2, null],
      ],
    );
    for (const [key, body] of Object.entries(objects)) {
      assert.deepEqual(await readS3(client, bucket, key.replace('p/', 'q/')), body, key);
    }
  });

  test('a throttled listing delays planning, which is retried; the job completes', async () => {
    const { call, src, dst } = await setup();
    const objects = { 'in/x.txt': 'x', 'in/y/z.txt': 'zz' };
    const bucket = await seedBucket(client, objects);
    proxy.failNext(2, slowDown('1'));
    const id = await copyJob(call, { from: `${src}:${bucket}/in/`, to: `${dst}:${bucket}/out/` });
    const job = await waitFor(call, `/v1/jobs/${id}`);
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.deepEqual(job.counts, {
      total: 2,
      pending: 0,
      succeeded: 2,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    const row = await t.services.db.kysely
      .selectFrom('jobs')
      .select(['planning_attempts'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(row.planning_attempts, 3, 'two throttled listings, then one that worked');
    assert.equal(String(await readS3(client, bucket, 'out/y/z.txt')), 'zz');
  });

  test('a connection cut in the middle of an object’s bytes: the object is retried and arrives whole', async () => {
    const { call, src, dst } = await setup();
    const big = randomBytes(3 * 1024 * 1024 + 11);
    const bucket = await seedBucket(client, { 'm/big.bin': big });
    // One object, so that its GET is the one request in flight when the cut is armed.
    cutNextGet.add('m/big.bin');
    const id = await copyJob(call, {
      from: `${src}:${bucket}/m/`,
      to: `${dst}:${bucket}/n/`,
      manifest: ['big.bin'],
    });
    const job = await waitFor(call, `/v1/jobs/${id}`);
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.equal(cutNextGet.size, 0, 'the GET was cut');
    const rows = await objectRows(id);
    assert.deepEqual(
      rows.map((r) => [r.key, r.status, r.attempts, r.error]),
      [['big.bin', 'succeeded', 2, null]],
    );
    assert.equal(job.bytes_done, big.length);
    assert.deepEqual(await readS3(client, bucket, 'n/big.bin'), big);
  });

  test('one part of a multipart upload damaged on the way, once: refused, tried again, whole, and proven by MD5 (issue 37)', async () => {
    const { call, src } = await setup();
    // The destination behind the fault proxy, on an account of its own, so the bytes stream through
    // ferry: just above the engine's single request (16 MiB), three parts of 8 MiB, 8 MiB and 1 KiB.
    const dst = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'DAMAGEDDST', secret_access_key: 'damaged-dst' },
      metadata: { endpoint: proxy.url },
    });
    const big = randomBytes(16 * 1024 * 1024 + 1024);
    const bucket = await seedBucket(client, { 'v/big.bin': big });
    const faulted = proxy.faulted;
    proxy.inject({ kind: 'corrupt' }, { match: (r) => r.method === 'PUT' && r.url.includes('partNumber=2') });
    const id = await copyJob(call, {
      from: `${src}:${bucket}/v/`,
      to: `${dst.id}:${bucket}/w/`,
      manifest: ['big.bin'],
    });
    const job = await waitFor(call, `/v1/jobs/${id}`);
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.equal(proxy.faulted - faulted, 1, 'the part was damaged');
    assert.deepEqual(
      (await objectRows(id)).map((r) => [r.key, r.status, r.attempts]),
      [['big.bin', 'succeeded', 2]],
    );
    assert.deepEqual(await readS3(client, bucket, 'w/big.bin'), big);
    assert.equal((job.counts as { size_only: number }).size_only, 0);
    const report = await call({ method: 'GET', url: `/v1/jobs/${id}/report` });
    const line = JSON.parse(report.body.trim());
    assert.deepEqual([line.verified, line.verified_by], ['checksum', 'md5']);
  });

  test('a prefix copy’s first attempt checks the source’s own MD5, from its listing and without a HEAD: a download damaged on the way once is refused, tried again, and arrives whole (issue 37)', async () => {
    const { call, src, dst } = await setup();
    const a = randomBytes(200_000);
    const c = Buffer.from('beside it');
    const bucket = await seedBucket(client, { 'r/a.bin': a, 'r/c.txt': c });
    const pathOf = (url: string) => decodeURIComponent(new URL(url, 'http://x').pathname);
    const seen = proxy.seen.length;
    const faulted = proxy.faulted;
    // One byte of the source's answer to the first GET of a.bin changed: what the destination gets is
    // what ferry sends, so only the source's own MD5 (the listing's ETag) can tell.
    proxy.inject(
      { kind: 'corrupt', side: 'answer' },
      { match: (r) => r.method === 'GET' && pathOf(r.url) === `/${bucket}/r/a.bin` },
    );
    // A prefix, not a manifest: the objects' first attempts have what the listing gave, no stat.
    const id = await copyJob(call, { from: `${src}:${bucket}/r/`, to: `${dst}:${bucket}/s/` });
    const job = await waitFor(call, `/v1/jobs/${id}`);
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.equal(proxy.faulted - faulted, 1, 'the download was damaged');
    const rows = await objectRows(id);
    assert.deepEqual(
      rows.map((r) => [r.key, r.status, r.attempts]),
      [
        ['a.bin', 'succeeded', 2],
        ['c.txt', 'succeeded', 1],
      ],
    );
    assert.deepEqual(await readS3(client, bucket, 's/a.bin'), a);
    assert.deepEqual(await readS3(client, bucket, 's/c.txt'), c);
    // The only HEAD is a.bin's retry, which stats its source again: no request per object was added.
    assert.deepEqual(
      proxy.seen
        .slice(seen)
        .filter((r) => r.method === 'HEAD')
        .map((r) => pathOf(r.url)),
      [`/${bucket}/r/a.bin`],
    );
    const report = await call({ method: 'GET', url: `/v1/jobs/${id}/report` });
    assert.deepEqual(
      report.body
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
        .map((l: { key: string; verified?: string; source_hash?: string }) => [
          l.key,
          l.verified,
          l.source_hash,
        ]),
      [
        ['a.bin', 'checksum', `md5:${createHash('md5').update(a).digest('hex')}`],
        ['c.txt', 'checksum', `md5:${createHash('md5').update(c).digest('hex')}`],
      ],
    );
  });

  test('a single copy (a transfer) that is throttled once is retried and completes', async () => {
    const { call, src, dst } = await setup();
    const body = randomBytes(20_000);
    const bucket = await seedBucket(client, { 'one.bin': body });
    proxy.failNext(1, slowDown('1'));
    const res = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${src}:${bucket}/one.bin`, to: `${dst}:${bucket}/two.bin` },
    });
    assert.equal(res.statusCode, 202, res.body);
    const done = await waitFor(call, `/v1/transfers/${res.json().id}`);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    const row = await t.services.db.kysely
      .selectFrom('transfers')
      .select(['attempts'])
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow();
    assert.equal(row.attempts, 2);
    assert.deepEqual(await readS3(client, bucket, 'two.bin'), body);
  });

  test('a provider that keeps failing: the object fails after MAX_ATTEMPTS, backing off longer each time, with the last error in /failures', async () => {
    const { call, src, dst } = await setup();
    const bucket = await seedBucket(client, { 'k/stuck.txt': 'stuck' });
    // Every request fails from now on. The clock stands still, so an attempt takes no time on it and
    // each wait reads exactly as decided; it is moved to each retry time instead of waiting.
    proxy.failNext(1000, slowDown('1'));
    clock.freeze();
    const waits: number[] = [];
    let failing: string;
    try {
      failing = await copyJob(call, {
        from: `${src}:${bucket}/k/`,
        to: `${dst}:${bucket}/l/`,
        manifest: ['stuck.txt'],
      });
      await waitUntil(
        async () => {
          const [row] = await objectRows(failing);
          if (row?.status === 'failed') return true;
          if (row?.status === 'pending' && row.attempts > waits.length && row.last_attempt_at !== null) {
            waits.push(Number(row.run_after) - Number(row.last_attempt_at));
            clock.skipTo(Number(row.run_after));
            t.worker?.nudge();
          }
          return false;
        },
        { what: 'the object to fail', detail: async () => JSON.stringify(await objectRows(failing)) },
      );
    } finally {
      clock.thaw();
    }
    proxy.reset();
    assert.equal(waits.length, MAX_ATTEMPTS - 1);
    waits.forEach((wait, i) => {
      // Half fixed, half random, never less than Retry-After's 1 s.
      const full = 1000 * 2 ** i;
      assert.ok(
        wait >= Math.max(1000, full / 2) && wait <= Math.max(1000, full),
        `wait ${i + 1}: ${wait} ms`,
      );
    });
    const job = await waitFor(call, `/v1/jobs/${failing}`);
    assert.equal(job.status, 'failed', JSON.stringify(job));
    assert.deepEqual(job.counts, {
      total: 1,
      pending: 0,
      succeeded: 0,
      skipped: 0,
      failed: 1,
      deleted: 0,
      size_only: 0,
    });
    const res = await call({ method: 'GET', url: `/v1/jobs/${failing}/failures` });
    assert.equal(res.statusCode, 200);
    const [failure, ...more] = res.json().failures;
    assert.deepEqual(more, []);
    assert.equal(failure.key, 'stuck.txt');
    assert.equal(failure.attempts, MAX_ATTEMPTS);
    assert.match(failure.error, /SlowDown|503/);
    assert.ok(failure.last_attempt_at);
    assert.equal(await readS3(client, bucket, 'l/stuck.txt'), undefined);
  });

  test('a 404 is not retried: the object fails at once with attempts 1, the others are copied (partial)', async () => {
    const { call, src, dst } = await setup();
    const bucket = await seedBucket(client, { 'h/here.txt': 'here' });
    const id = await copyJob(call, {
      from: `${src}:${bucket}/h/`,
      to: `${dst}:${bucket}/g/`,
      manifest: ['here.txt', 'gone.txt'],
    });
    const job = await waitFor(call, `/v1/jobs/${id}`);
    assert.equal(job.status, 'partial', JSON.stringify(job));
    assert.deepEqual(job.counts, {
      total: 2,
      pending: 0,
      succeeded: 1,
      skipped: 0,
      failed: 1,
      deleted: 0,
      size_only: 0,
    });
    const failures = (await call({ method: 'GET', url: `/v1/jobs/${id}/failures` })).json().failures;
    assert.equal(failures.length, 1);
    assert.equal(failures[0].key, 'gone.txt');
    assert.equal(failures[0].attempts, 1);
    assert.match(failures[0].error, /NotFound|NoSuchKey|not found/i);
    assert.equal(String(await readS3(client, bucket, 'g/here.txt')), 'here');
  });
});
