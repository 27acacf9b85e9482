// Issue 4, "How it is tested": the restart test. One `ferry serve` (FERRY_ROLE=all) on a SQLite data
// dir runs a prefix copy from s3rver (in this process) to s3rver; it is stopped in the middle — with
// SIGTERM and no time to finish (the running objects are handed back without counting the attempt),
// then with kill -9 (the leases run out and the next start takes the objects over, the lost attempt
// counted) — and started again on the same data dir: the job completes with every object right.
// And once while a large manifest is being planned: the next start plans the rest.
//
// The two locations are different accounts, so each object is streamed through the process, its source
// read through a fault proxy in this process. The proxy lets the listing and a fixed number of objects
// through and then holds the next reads mid-body, as many as the worker runs at once: the job is
// certainly midway (that many copied, that many running, the rest waiting) when it is stopped.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import SQLite from 'better-sqlite3';
import { deferred } from '../support/deferred.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { unique } from '../support/fixtures.js';
import {
  apiCall,
  type FerryProcess,
  freePort,
  killAll,
  s3Location,
  startServe,
} from '../support/processes.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { readS3, s3Client } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

const OBJECTS = 150;
/** Objects copied before the proxy holds the next reads. */
const COPIED_FIRST = 15;
/** FERRY_WORKER_CONCURRENCY: the reads held at once, which fill every slot. */
const CONCURRENCY = 4;
const MANIFEST_KEYS = 12_000;

interface JobView {
  status: string;
  counts: { total: number; pending: number; succeeded: number; skipped: number; failed: number };
  bytes_done: number;
}

interface ObjectRow {
  seq: number;
  key: string;
  status: string;
  attempts: number;
  last_attempt_at: number | null;
  lease_owner: string | null;
}

const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');

async function eachLimit<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

describe('restart [sqlite]', () => {
  let s3: S3rverHandle;
  let proxy: FaultProxy;
  let client: S3Client;
  let dataDir: string;
  let env: Record<string, string>;
  let origin: string;
  let token: string;
  let server: FerryProcess | undefined;
  let src: string;
  let dst: string;
  let from: string;
  let to: string;
  const expected = new Map<string, { md5: string; size: number }>();

  before(async () => {
    s3 = await startS3rver();
    proxy = await startFaultProxy(s3.endpoint);
    client = s3Client(s3.endpoint);
    dataDir = mkdtempSync(join(tmpdir(), 'ferry-restart-'));
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    env = {
      FERRY_ROLE: 'all',
      FERRY_DATA_DIR: dataDir,
      FERRY_PORT: String(port),
      FERRY_EGRESS_ALLOW: '127.0.0.1/32',
      FERRY_WORKER_CONCURRENCY: String(CONCURRENCY),
      FERRY_WORKER_LEASE_SECONDS: '3',
      FERRY_SHUTDOWN_SECONDS: '0',
    };
    src = unique('src').toLowerCase();
    dst = unique('dst').toLowerCase();
    await client.send(new CreateBucketCommand({ Bucket: src }));
    await client.send(new CreateBucketCommand({ Bucket: dst }));
    // Two sets of objects (one per test), 96-288 KiB each, kept as MD5s.
    const keys = ['sigterm', 'kill'].flatMap((set) =>
      Array.from({ length: OBJECTS }, (_, i) => `${set}/${i % 5}/object ${i}.bin`),
    );
    const [started] = await Promise.all([
      startServe('ferry', env),
      eachLimit(keys, 16, async (key) => {
        const body = randomBytes(96 * 1024 + Math.floor(Math.random() * 192 * 1024));
        await client.send(new PutObjectCommand({ Bucket: src, Key: key, Body: body }));
        expected.set(key, { md5: md5(body), size: body.length });
      }),
    ]);
    server = started;
    token = readFileSync(join(dataDir, 'bootstrap-key'), 'utf8').trim();
    [from, to] = await Promise.all([location(proxy.url, 'FERRYKEYA'), location(s3.endpoint, 'FERRYKEYB')]);
  });

  after(async () => {
    await killAll();
    client?.destroy();
    await proxy?.close();
    await s3?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    apiCall<T>(origin, token, method, path, body);
  const location = (endpoint: string, key: string) => s3Location(origin, token, endpoint, key);

  /** Reads the job until `until` holds; fails with the last view and the server's log after `ms`. */
  async function watch(id: string, until: (job: JobView) => boolean, ms: number): Promise<JobView> {
    let last: JobView | undefined;
    return waitUntil(
      async () => {
        const res = await call<JobView>('GET', `/v1/jobs/${id}`);
        assert.equal(res.status, 200, JSON.stringify(res.json));
        last = res.json;
        return until(last) ? last : undefined;
      },
      {
        what: 'the job to reach the expected state',
        timeoutMs: ms,
        // Each read is a request the server under test must answer on a shared machine.
        pauseMs: 100,
        detail: () => `${JSON.stringify(last)}\n${server?.log()}`,
      },
    );
  }

  /** The job's objects as the database has them (read beside the running server: WAL allows it). */
  function rows(jobId: string): ObjectRow[] {
    const db = new SQLite(join(dataDir, 'ferry.db'));
    try {
      db.pragma('busy_timeout = 5000');
      return db
        .prepare(
          'select seq, key, status, attempts, last_attempt_at, lease_owner from job_objects where job_id = ? order by seq',
        )
        .all(jobId) as ObjectRow[];
    } finally {
      db.close();
    }
  }

  function planningDone(jobId: string): number {
    const db = new SQLite(join(dataDir, 'ferry.db'));
    try {
      db.pragma('busy_timeout = 5000');
      const row = db.prepare('select planning_done from jobs where id = ?').get(jobId) as
        | { planning_done: number }
        | undefined;
      return row?.planning_done ?? -1;
    } finally {
      db.close();
    }
  }

  async function startJob(set: string): Promise<string> {
    const res = await call('POST', '/v1/copy', {
      from: `${from}:${src}/${set}/`,
      to: `${to}:${dst}/${set}/`,
    });
    assert.equal(res.status, 202, JSON.stringify(res.json));
    return String(res.json.job_id);
  }

  /**
   * Starts a job whose first COPIED_FIRST objects copy and whose next CONCURRENCY reads the proxy
   * holds, and resolves once it is there: that many copied, the held ones running, the rest pending.
   * `release` lets the held reads go on (the proxy then cuts them).
   */
  async function startHeld(set: string): Promise<{ jobId: string; release(): void }> {
    const gate = deferred();
    proxy.reset();
    const mark = proxy.seen.length;
    proxy.passNext(1 + COPIED_FIRST); // the listing, then one GET per object
    proxy.dropNext(CONCURRENCY, gate.promise);
    const jobId = await startJob(set);
    await waitUntil(() => proxy.seen.length - mark === 1 + COPIED_FIRST + CONCURRENCY, {
      what: 'the held reads to reach the proxy',
      detail: () => `${JSON.stringify(proxy.seen.slice(mark))}\n${server?.log()}`,
    });
    await watch(jobId, (j) => j.counts.total === OBJECTS && j.counts.succeeded === COPIED_FIRST, 30_000);
    const running = rows(jobId).filter((r) => r.status === 'running');
    assert.ok(running.length >= CONCURRENCY, `the held objects run: ${JSON.stringify(running)}`);
    return { jobId, release: gate.resolve };
  }

  async function restartAndFinish(jobId: string, prefix: string): Promise<void> {
    server = await startServe('ferry (again)', env);
    const done = await watch(jobId, (j) => j.status !== 'planning' && j.status !== 'running', 40_000);
    assert.equal(done.status, 'complete', `${JSON.stringify(done)}\n${server.log()}`);
    assert.deepEqual(done.counts, { total: OBJECTS, pending: 0, succeeded: OBJECTS, skipped: 0, failed: 0 });
    const set = [...expected].filter(([key]) => key.startsWith(`${prefix}/`));
    assert.equal(set.length, OBJECTS);
    assert.equal(
      done.bytes_done,
      set.reduce((n, [, o]) => n + o.size, 0),
    );
    const wrong: string[] = [];
    await eachLimit(set, 16, async ([key, want]) => {
      const got = await readS3(client, dst, key);
      if (!got || got.length !== want.size || md5(got) !== want.md5) wrong.push(key);
    });
    assert.deepEqual(wrong, [], `${wrong.length} destination objects missing or different`);
  }

  test('SIGTERM mid-job hands the running objects back uncounted; the next start completes the job', async () => {
    assert.ok(server, 'the server is running');
    const { jobId, release } = await startHeld('sigterm');
    const stopped = await server.stop();
    release();
    assert.equal(stopped.code, 0, `exit ${JSON.stringify(stopped)}\n${server.log()}`);
    assert.ok(
      server.lines.some((l) => l.includes('"stopped"')),
      server.log(),
    );

    const between = rows(jobId);
    assert.equal(between.length, OBJECTS);
    assert.deepEqual(
      between.filter((r) => r.status === 'running' || r.lease_owner !== null),
      [],
      'nothing left running or leased',
    );
    assert.equal(between.filter((r) => r.status === 'succeeded').length, COPIED_FIRST);
    const handedBack = between.filter((r) => r.status === 'pending' && r.last_attempt_at !== null);
    assert.ok(handedBack.length > 0, 'some objects were running and were handed back');
    assert.ok(
      handedBack.every((r) => r.attempts === 0),
      `the interrupted attempts are not counted: ${JSON.stringify(handedBack)}`,
    );

    await restartAndFinish(jobId, 'sigterm');
    assert.deepEqual(
      rows(jobId).filter((r) => r.attempts !== 1),
      [],
      'each object took one counted attempt',
    );
  });

  test('kill -9 mid-job: the next start takes the dead process’s objects over when their leases run out', async () => {
    if (!server || server.child.exitCode !== null) server = await startServe('ferry', env);
    const { jobId, release } = await startHeld('kill');
    const killed = await server.kill();
    release();
    assert.equal(killed.signal, 'SIGKILL');
    const orphaned = rows(jobId).filter((r) => r.status === 'running');
    assert.ok(orphaned.length >= CONCURRENCY, 'the killed process held objects');

    await restartAndFinish(jobId, 'kill');
    assert.ok(
      server.lines.some((l) => l.includes('took back work whose lease ran out')),
      server.log(),
    );
    const after = rows(jobId);
    for (const o of orphaned) {
      assert.equal(
        after.find((r) => r.seq === o.seq)?.attempts,
        2,
        `${o.key}: the attempt the crash cut short counts`,
      );
    }
  });

  test('SIGTERM while a large manifest is being planned: the next start plans the rest, each key once', async () => {
    if (!server || server.child.exitCode !== null) server = await startServe('ferry', env);
    // Keys that do not exist: their objects fail fast (404) while planning goes on.
    const keys = Array.from({ length: MANIFEST_KEYS }, (_, i) => `dir-${i % 50}/missing-${i}.bin`);
    const res = await call('POST', '/v1/copy', {
      from: `${from}:${src}/none/`,
      to: `${to}:${dst}/none/`,
      manifest: keys,
    });
    assert.equal(res.status, 202, JSON.stringify(res.json));
    const jobId = String(res.json.job_id);
    // The first batches are in (the planner commits them as it goes): stop now.
    await watch(jobId, (j) => j.counts.total > 0, 30_000);
    const stopped = await server.stop();
    assert.equal(stopped.code, 0, `exit ${JSON.stringify(stopped)}\n${server.log()}`);
    const planned = rows(jobId).length;
    assert.ok(
      planned < MANIFEST_KEYS,
      `planning was cut short (${planned} of ${MANIFEST_KEYS} keys planned)`,
    );
    assert.equal(planningDone(jobId), 0);

    server = await startServe('ferry (again)', env);
    // Watched through the API only: this process opens the database file only while no server runs.
    // (Opening it beside a restarted server once ended that server with SIGBUS; the cause is fixed and
    // pinned by test/db/sqlite-files.test.ts, so this is only to keep the test about restarts.)
    const job = await watch(
      jobId,
      (j) => j.counts.total === MANIFEST_KEYS && j.status !== 'planning',
      40_000,
    );
    assert.notEqual(job.status, 'planning');
    const stoppedAgain = await server.stop();
    assert.equal(stoppedAgain.code, 0, `exit ${JSON.stringify(stoppedAgain)}\n${server.log()}`);
    assert.equal(planningDone(jobId), 1);
    const all = rows(jobId);
    assert.equal(all.length, MANIFEST_KEYS);
    assert.equal(new Set(all.map((r) => r.key)).size, MANIFEST_KEYS, 'each key once');
  });
});
