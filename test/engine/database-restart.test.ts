// Issue 27, "Faults, rotation and scale": PostgreSQL restarts under load. Two `ferry serve` processes
// (FERRY_ROLE=all: each answers the API and runs a worker) share a PostgreSQL server of the test's own
// (test/support/private-postgres.ts: the shared server on 5432 is never stopped); a bulk copy of
// OBJECTS objects runs between s3rver buckets, and in its middle the server is stopped (fast shutdown,
// every session ended) and started again on the same socket and data. While it is down the API answers
// 503 with Retry-After (never 500) and /readyz 503; each background loop says once that the database
// is not reachable and once that it answers again; after the restart the job completes by itself with
// every object copied exactly once: one server-side copy request per key (counted at the fault proxy
// both locations go through), one record per key, and the job's counts and the destination's listing
// agree. A single copy whose answer arrives while the server is down is recorded once it is back,
// after one attempt and one copy request. docs/performance.md, "The database restarts", has what it
// measured.
//
// OBJECTS is 2,000 rather than the 10,000: on a 2-core machine shared with other tests, seeding
// and copying 10,000 objects through s3rver takes minutes. The full size is one variable away:
// FERRY_TEST_RESTART_OBJECTS=10000 npm test -- engine/database-restart (docs/performance.md, "The
// database restarts", has such a run).
// There is no SQLite half: several processes on one database need PostgreSQL (README), and SQLite's
// busy answers are tested in test/db/sqlite-busy.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  CreateBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import pg from 'pg';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { unique } from '../support/fixtures.js';
import {
  type PrivatePostgres,
  privatePostgresUnavailable,
  startPrivatePostgres,
} from '../support/private-postgres.js';
import {
  apiCall,
  type FerryProcess,
  killAll,
  type ServeProcess,
  s3Location,
  startServe,
  unexpectedExits,
} from '../support/processes.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { s3Client } from '../support/transfers.js';
import { HANG_MS, waitUntil } from '../support/wait.js';

const OBJECTS = Number(process.env.FERRY_TEST_RESTART_OBJECTS ?? 2000);
/** The job is stopped in its middle: once this many objects are copied. */
const BEFORE_RESTART = Math.round(OBJECTS / 5);
/** Waits grow with the job. */
const SCALE = Math.max(1, OBJECTS / 2000);
const UNREACHABLE = { error: 503, message: 'the database is not reachable; try again shortly' };

interface JobView {
  status: string;
  counts: { total: number; pending: number; succeeded: number; skipped: number; failed: number };
}

async function eachLimit<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

/** Every key under `prefix` in `bucket`, page by page. */
async function listKeys(client: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
    token = page.NextContinuationToken;
  } while (token);
  return keys;
}

const skip = privatePostgresUnavailable();

describe('the database restarts under load [postgres]', { skip: skip ?? false }, () => {
  let database: PrivatePostgres;
  let s3: S3rverHandle;
  let proxy: FaultProxy;
  let client: S3Client;
  const dirs: string[] = [];
  const servers: ServeProcess[] = [];
  const origins: string[] = [];
  let token: string;

  before(async () => {
    [database, s3] = await Promise.all([startPrivatePostgres(), startS3rver()]);
    proxy = await startFaultProxy(s3.endpoint);
    client = s3Client(s3.endpoint);
  });

  after(async () => {
    await killAll();
    client?.destroy();
    await proxy?.close();
    await s3?.close();
    await database?.destroy();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Two `ferry serve` processes on the private server; the first bootstraps it. */
  async function startServers(): Promise<void> {
    if (servers.length > 0) return;
    const env = {
      FERRY_DATABASE_URL: database.url,
      FERRY_MASTER_KEY: randomBytes(32).toString('base64'),
      FERRY_EGRESS_ALLOW: '127.0.0.1/32',
      FERRY_ROLE: 'all',
      FERRY_SHUTDOWN_SECONDS: '1',
    };
    for (const name of ['ferry-1', 'ferry-2']) {
      const dir = mkdtempSync(join(tmpdir(), 'ferry-db-restart-'));
      dirs.push(dir);
      const server = await startServe(name, { ...env, FERRY_DATA_DIR: dir });
      servers.push(server);
      origins.push(server.origin);
      token ??= readFileSync(join(dir, 'bootstrap-key'), 'utf8').trim();
    }
  }

  const logs = () => `${servers.map((s) => s.log()).join('\n')}\n--- postgres ---\n${database.log()}`;

  /** A raw request to `origin`, with its status, Retry-After and body. */
  async function raw(origin: string, path: string, init: RequestInit = {}) {
    const res = await fetch(`${origin}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
  }

  async function readJob(id: string): Promise<JobView | undefined> {
    const res = await apiCall<JobView>(origins[0] as string, token, 'GET', `/v1/jobs/${id}`);
    return res.status === 200 ? res.json : undefined;
  }

  test(`PostgreSQL restarted in the middle of a ${OBJECTS}-object job on two processes: 503 while it is down, then the job completes, each object copied once`, async () => {
    const src = unique('src').toLowerCase();
    const dst = unique('dst').toLowerCase();
    const keys = Array.from({ length: OBJECTS }, (_, i) => `data/${i % 10}/object-${i}.txt`);
    await Promise.all([
      startServers(),
      (async () => {
        await client.send(new CreateBucketCommand({ Bucket: src }));
        await client.send(new CreateBucketCommand({ Bucket: dst }));
        await eachLimit(keys, 16, (key) =>
          client.send(new PutObjectCommand({ Bucket: src, Key: key, Body: `${key}\n` })).then(() => {}),
        );
      })(),
    ]);
    // One account on one endpoint (the proxy, which counts the requests): server-side copies.
    const [from, to] = await Promise.all([
      s3Location(origins[0] as string, token, proxy.url, 'FERRYKEY'),
      s3Location(origins[0] as string, token, proxy.url, 'FERRYKEY'),
    ]);
    const accepted = await apiCall(origins[0] as string, token, 'POST', '/v1/copy', {
      from: `${from}:${src}/data/`,
      to: `${to}:${dst}/copy/`,
    });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.json));
    const jobId = String(accepted.json.job_id);
    const startedAt = performance.now();

    let last: JobView | undefined;
    await waitUntil(
      async () => {
        last = await readJob(jobId);
        return last !== undefined && last.counts.succeeded >= BEFORE_RESTART;
      },
      { what: `${BEFORE_RESTART} objects copied`, timeoutMs: HANG_MS * SCALE, pauseMs: 50, detail: logs },
    );
    assert.equal(last?.status, 'running', 'the job is in its middle when the database stops');

    await database.stop();
    const downAt = performance.now();

    // While it is down: the API answers 503 with Retry-After, on a read and on a write, and /readyz
    // says so, on both processes.
    for (const origin of origins) {
      const read = await raw(origin, `/v1/jobs/${jobId}`);
      assert.deepEqual([read.status, read.body], [503, UNREACHABLE], logs());
      assert.ok(Number(read.retryAfter) >= 1, `Retry-After: ${read.retryAfter}`);
      const write = await raw(origin, '/v1/copy', {
        method: 'POST',
        body: JSON.stringify({ from: `${from}:${src}/data/`, to: `${to}:${dst}/again/` }),
      });
      assert.deepEqual([write.status, write.body], [503, UNREACHABLE]);
      for (let probe = 0; probe < 3; probe++) {
        const ready = await fetch(`${origin}/readyz`);
        assert.equal(ready.status, 503);
      }
    }
    const answeredAt = performance.now();
    // Every worker noticed, and says so once.
    for (const server of servers) await server.waitForLine(/worker: the database is not reachable/);
    const outageSeen = performance.now();

    await database.start();
    const upAt = performance.now();
    for (const server of servers) await server.waitForLine(/worker: the database answers again/);
    const resumedAt = performance.now();

    const done = await waitUntil(
      async () => {
        last = await readJob(jobId);
        return last && last.status !== 'running' && last.status !== 'planning' ? last : undefined;
      },
      { what: 'the job to end', timeoutMs: HANG_MS * SCALE, pauseMs: 100, detail: logs },
    );
    const endedAt = performance.now();
    assert.equal(unexpectedExits(), '', 'both processes ran throughout');
    assert.equal(done.status, 'complete', `${JSON.stringify(done)}\n${logs()}`);
    assert.deepEqual(done.counts, {
      total: OBJECTS,
      pending: 0,
      succeeded: OBJECTS,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });

    // The destination holds every key, once.
    const listed = await listKeys(client, dst, 'copy/');
    assert.equal(listed.length, OBJECTS);
    assert.deepEqual(new Set(listed), new Set(keys.map((k) => `copy/${k.slice('data/'.length)}`)));
    // Each object was copied by one request: none was copied again after the restart.
    const copies = new Map<string, number>();
    for (const r of proxy.seen) {
      if (r.method === 'PUT' && r.copySource) copies.set(r.url, (copies.get(r.url) ?? 0) + 1);
    }
    assert.equal(copies.size, OBJECTS, 'a copy request per object');
    const twice = [...copies].filter(([, n]) => n > 1);
    assert.deepEqual(twice, [], 'no object copied twice');
    // One record per key, each settled once.
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const rows = await db.query<{ n: string; keys: string; settled: string }>(
        `select count(*) as n, count(distinct key) as keys,
           count(*) filter (where status = 'succeeded' and lease_owner is null) as settled
         from job_objects where job_id = $1`,
        [jobId],
      );
      assert.deepEqual(rows.rows[0], { n: String(OBJECTS), keys: String(OBJECTS), settled: String(OBJECTS) });
    } finally {
      await db.end();
    }
    // One line each way per loop and process, not one per round.
    for (const server of servers) {
      const down = server.lines.filter((l) => l.includes('worker: the database is not reachable'));
      const back = server.lines.filter((l) => l.includes('worker: the database answers again'));
      assert.deepEqual([down.length, back.length], [1, 1], server.log());
      // The wake-up connection too, however many tries its reconnection took.
      // /readyz, probed three times while it was down, says so once, and once that it is back.
      await waitUntil(
        async () => {
          await fetch(`${origins[servers.indexOf(server)]}/readyz`);
          return server.lines.some((l) => l.includes('readyz: the database answers again'));
        },
        { what: '/readyz to say the database is back', detail: () => server.log() },
      );
      const unready = server.lines.filter((l) => l.includes('readyz: the database is not reachable'));
      assert.equal(unready.length, 1, server.log());
      const lost = server.lines.filter((l) => l.includes('wake-up connection lost'));
      const found = server.lines.filter((l) => l.includes('wake-up connection back'));
      assert.deepEqual([lost.length, found.length], [1, 1], server.log());
    }
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(
      `database restart: ${OBJECTS} objects; ${BEFORE_RESTART}+ copied ${s(downAt - startedAt)} after the accept; ` +
        `the 503s took ${s(answeredAt - downAt)}; workers noticed within ${s(outageSeen - downAt)}; ` +
        `down ${s(upAt - downAt)}; ` +
        `workers back ${s(resumedAt - upAt)} after the restart; job ended ${s(endedAt - upAt)} after it`,
    );
  });
  test('a single copy whose answer comes while PostgreSQL is down is recorded once it is back: complete, one attempt, copied once', async () => {
    await startServers();
    const bucket = unique('single').toLowerCase();
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'one.txt', Body: 'one\n' }));
    const [from, to] = await Promise.all([
      s3Location(origins[0] as string, token, proxy.url, 'FERRYKEY'),
      s3Location(origins[0] as string, token, proxy.url, 'FERRYKEY'),
    ]);
    // The copy's answer is held at the proxy until the database has stopped.
    const isCopy = (r: { method: string; copySource: boolean; url: string }) =>
      r.method === 'PUT' && r.copySource && r.url.includes(`/${bucket}/copied.txt`);
    let stopped!: () => void;
    const until = new Promise<void>((resolve) => {
      stopped = resolve;
    });
    proxy.inject({ kind: 'delay', ms: 0, until }, { match: isCopy });
    const accepted = await apiCall(origins[0] as string, token, 'POST', '/v1/copy', {
      from: `${from}:${bucket}/one.txt`,
      to: `${to}:${bucket}/copied.txt`,
    });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.json));
    const transferId = String(accepted.json.id);
    await waitUntil(() => proxy.seen.some(isCopy), { what: 'the copy request', detail: logs });
    const outages = (server: FerryProcess) =>
      server.lines.filter((l) => l.includes('worker: the database is not reachable')).length;
    const before = servers.map(outages);
    await database.stop();
    stopped();
    // The answer reaches the worker while the database is away; each worker notices the outage.
    await waitUntil(() => proxy.seen.some((r) => isCopy(r) && r.answered), { what: 'the answer' });
    await waitUntil(() => servers.every((server, i) => outages(server) > (before[i] ?? 0)), {
      what: 'each worker to notice the outage',
      detail: logs,
    });
    await database.start();

    const ended = await waitUntil(
      async () => {
        const res = await apiCall<{ status: string }>(
          origins[0] as string,
          token,
          'GET',
          `/v1/transfers/${transferId}`,
        );
        return res.status === 200 && res.json.status !== 'running' && res.json.status !== 'queued'
          ? res.json
          : undefined;
      },
      { what: 'the transfer to end', pauseMs: 100, detail: logs },
    );
    assert.equal(ended.status, 'complete', `${JSON.stringify(ended)}\n${logs()}`);
    assert.equal(proxy.seen.filter(isCopy).length, 1, 'copied once: not run again after the restart');
    // One attempt: its result was kept through the outage, not lost with a crash and run again.
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const row = await db.query<{ attempts: number }>('select attempts from transfers where id = $1', [
        transferId,
      ]);
      assert.deepEqual(row.rows[0], { attempts: 1 });
    } finally {
      await db.end();
    }
    assert.equal(unexpectedExits(), '', 'both processes ran throughout');
  });
});
