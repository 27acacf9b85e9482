// Issue 4, "How it is tested": the crash test. One API process and two worker processes (real
// `ferry serve` children) share one PostgreSQL schema; a 500-object prefix copy runs on s3rver (in
// this process); one worker is killed with SIGKILL in the middle. The job must still end `complete`
// with every object at the destination, byte for byte: the surviving worker takes over the dead one's
// objects when their lease runs out (FERRY_WORKER_LEASE_SECONDS keeps that short here).
//
// The two locations use different access keys, so they are different accounts and every object is
// streamed through a worker (GET from the source, PUT to the destination) rather than copied
// server-side. The source is read through a fault proxy in this process, which lets the listing and a
// fixed number of objects through and then holds the next reads mid-body, as many as both workers run
// at once: when the victim is killed, that many objects are copied and it certainly holds some.
//
// There is no SQLite half: several processes on one database need PostgreSQL (README).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';
import { createSchema, testDatabases } from '../support/databases.js';
import { deferred } from '../support/deferred.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { unique } from '../support/fixtures.js';
import {
  apiCall,
  type FerryProcess,
  killAll,
  type ServeProcess,
  s3Location,
  startServe,
} from '../support/processes.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { readS3, s3Client } from '../support/transfers.js';
import { HANG_MS, waitUntil } from '../support/wait.js';
import { type JobView, watchJob } from './restart-jobs.js';

const OBJECTS = 500;
const LEASE_SECONDS = 3;
/** Objects copied before the proxy holds the next reads. */
const COPIED_FIRST = 40;
/** FERRY_WORKER_CONCURRENCY of each of the two workers. */
const CONCURRENCY = 4;

/** Runs `work` over `items`, `limit` at a time. */
async function eachLimit<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');

const postgres = (await testDatabases()).find((d) => d.name === 'postgres');

describe('crash test [postgres]', { skip: postgres?.skip ?? false }, () => {
  let s3: S3rverHandle;
  let proxy: FaultProxy;
  let client: S3Client;
  let schema: Awaited<ReturnType<typeof createSchema>>;
  let db: pg.Client;
  const dirs: string[] = [];
  let env: Record<string, string>;
  let api: ServeProcess;
  let origin: string;
  let token: string;

  before(async () => {
    [s3, schema] = await Promise.all([startS3rver(), createSchema()]);
    proxy = await startFaultProxy(s3.endpoint);
    client = s3Client(s3.endpoint);
    db = new pg.Client({ connectionString: schema.url });
    await db.connect();
    env = {
      FERRY_DATABASE_URL: schema.url,
      FERRY_MASTER_KEY: randomBytes(32).toString('base64'),
      FERRY_EGRESS_ALLOW: '127.0.0.1/32',
      FERRY_WORKER_LEASE_SECONDS: String(LEASE_SECONDS),
      FERRY_WORKER_CONCURRENCY: String(CONCURRENCY),
      FERRY_SHUTDOWN_SECONDS: '1',
    };
    const dataDir = () => {
      const dir = mkdtempSync(join(tmpdir(), 'ferry-crash-'));
      dirs.push(dir);
      return dir;
    };
    // The API first: it bootstraps the empty database and writes the key into its data dir.
    const apiDir = dataDir();
    api = await startServe('api', {
      ...env,
      FERRY_ROLE: 'api',
      FERRY_DATA_DIR: apiDir,
    });
    origin = api.origin;
    token = readFileSync(join(apiDir, 'bootstrap-key'), 'utf8').trim();
  });

  after(async () => {
    await killAll();
    client?.destroy();
    await proxy?.close();
    await db?.end();
    await schema?.drop();
    await s3?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    apiCall<T>(origin, token, method, path, body);
  const location = (endpoint: string, key: string) => s3Location(origin, token, endpoint, key);

  /** Reads the job until `until` holds; fails with the last view (and the workers' logs) after `ms`. */
  function watch(
    id: string,
    until: (job: JobView) => boolean,
    ms: number,
    processes: FerryProcess[],
  ): Promise<JobView> {
    return watchJob(call, id, until, ms, () => processes.map((p) => p.log()).join('\n'));
  }

  test('kill -9 of one of two workers in the middle of a 500-object job: the other takes over and the job completes', async () => {
    // Two workers on the same database, each with its own (empty) data dir, started while the source
    // is seeded: 500 objects of 64-192 KiB with distinct contents, of which only the MD5s are kept.
    const src = unique('src').toLowerCase();
    const dst = unique('dst').toLowerCase();
    const expected = new Map<string, { md5: string; size: number }>();
    const keys = Array.from({ length: OBJECTS }, (_, i) => `data/${String(i % 7)}/object ${i}.bin`);
    const seed = async () => {
      await client.send(new CreateBucketCommand({ Bucket: src }));
      await client.send(new CreateBucketCommand({ Bucket: dst }));
      await eachLimit(keys, 16, async (key) => {
        const body = randomBytes(64 * 1024 + Math.floor(Math.random() * 128 * 1024));
        await client.send(new PutObjectCommand({ Bucket: src, Key: key, Body: body }));
        expected.set(key, { md5: md5(body), size: body.length });
      });
    };
    const [workers] = await Promise.all([
      Promise.all(
        ['worker-1', 'worker-2'].map((name) => {
          const dir = mkdtempSync(join(tmpdir(), 'ferry-crash-'));
          dirs.push(dir);
          return startServe(name, { ...env, FERRY_ROLE: 'worker', FERRY_DATA_DIR: dir });
        }),
      ),
      seed(),
    ]);
    const [victim, survivor] = workers as [ServeProcess, ServeProcess];
    const totalBytes = [...expected.values()].reduce((n, o) => n + o.size, 0);

    const [a, b] = await Promise.all([location(proxy.url, 'FERRYKEYA'), location(s3.endpoint, 'FERRYKEYB')]);
    // The listing and COPIED_FIRST objects' reads pass (one GET each); the next reads, one per slot of
    // the two workers, stop after their first bytes until `gate` opens.
    const gate = deferred();
    const mark = proxy.seen.length;
    const heldReads = 2 * CONCURRENCY;
    proxy.passNext(1 + COPIED_FIRST);
    proxy.dropNext(heldReads, gate.promise);
    const accepted = await call('POST', '/v1/copy', { from: `${a}:${src}/data/`, to: `${b}:${dst}/copy/` });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.json));
    const jobId = String(accepted.json.job_id);

    // Some, not all, copied, and the victim holding objects right now.
    const owner = `%:${victim.pid}:%`;
    const held = async () =>
      Number(
        (
          await db.query(
            "select count(*) as n from job_objects where status = 'running' and lease_owner like $1",
            [owner],
          )
        ).rows[0].n,
      );
    // Every slot of both workers holds a read, so each worker runs CONCURRENCY objects, and nothing
    // more can finish until the gate opens.
    await waitUntil(() => proxy.seen.length - mark === 1 + COPIED_FIRST + heldReads, {
      what: 'the held reads to reach the proxy',
      detail: () => `${JSON.stringify(proxy.seen.slice(mark))}\n${workers.map((p) => p.log()).join('\n')}`,
    });
    await watch(
      jobId,
      (job) => job.counts.total === OBJECTS && job.counts.succeeded === COPIED_FIRST,
      HANG_MS,
      workers,
    );
    assert.ok((await held()) >= CONCURRENCY, 'the victim runs its held objects');

    const killed = await victim.kill();
    // The survivor's held reads are cut now: passing failures it retries after a backoff.
    gate.resolve();
    assert.equal(killed.signal, 'SIGKILL');
    const orphaned = (
      await db.query<{ seq: number }>(
        "select seq from job_objects where job_id = $1 and status = 'running' and lease_owner like $2",
        [jobId, owner],
      )
    ).rows.map((r) => r.seq);
    assert.ok(orphaned.length > 0, 'the killed worker held objects when it died');

    const done = await watch(
      jobId,
      (job) => job.status !== 'running' && job.status !== 'planning',
      2 * HANG_MS,
      [survivor],
    ).catch(async (err: Error) => {
      // Where the job's objects stand, for a run that did not end: what the survivor holds or waits for.
      const rows = await db.query(
        `select status, coalesce(split_part(lease_owner, ':', 2), '-') as pid, attempts,
                count(*) as n, min(run_after) - $2 as first_run_after_ms, max(error) as error
           from job_objects where job_id = $1 group by 1, 2, 3 order by 1, 2, 3`,
        [jobId, Date.now()],
      );
      err.message += `\njob objects (victim pid ${victim.pid}, survivor pid ${survivor.pid}):\n${rows.rows.map((r) => JSON.stringify(r)).join('\n')}`;
      throw err;
    });
    assert.equal(done.status, 'complete', `${JSON.stringify(done)}\n${survivor.log()}`);
    assert.deepEqual(done.counts, {
      total: OBJECTS,
      pending: 0,
      succeeded: OBJECTS,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(done.bytes_done, totalBytes);
    assert.ok(
      survivor.lines.some((l) => l.includes('took back work whose lease ran out')),
      `the survivor reclaimed the dead worker's objects\n${survivor.log()}`,
    );
    // The objects the victim held were finished by the survivor (nothing left in the dead one's name).
    assert.equal(await held(), 0);
    const leftovers = await db.query(
      "select count(*) as n from job_objects where job_id = $1 and (lease_owner is not null or status <> 'succeeded')",
      [jobId],
    );
    assert.equal(Number(leftovers.rows[0].n), 0);
    const retaken = await db.query<{ seq: number; attempts: number }>(
      'select seq, attempts from job_objects where job_id = $1 and seq = any($2::int[])',
      [jobId, orphaned],
    );
    assert.equal(retaken.rows.length, orphaned.length);
    for (const row of retaken.rows) {
      assert.ok(
        row.attempts >= 2,
        `object ${row.seq}: the attempt cut short by the crash counts, then another`,
      );
    }

    // Every destination object present, with the source's bytes.
    const wrong: string[] = [];
    await eachLimit(keys, 16, async (key) => {
      const got = await readS3(client, dst, `copy/${key.slice('data/'.length)}`);
      const want = expected.get(key);
      if (!got || !want || got.length !== want.size || md5(got) !== want.md5) wrong.push(key);
    });
    assert.deepEqual(wrong, [], `${wrong.length} destination objects missing or different`);

    // The survivor stops cleanly on SIGTERM, handing nothing back (it holds nothing).
    const stopped = await survivor.stop();
    assert.equal(stopped.code, 0, survivor.log());
    assert.equal(api.child.exitCode, null, `the API process served throughout\n${api.log()}`);
  });
});
