// The durable queue below the worker, on both databases: claims with leases (each object to one
// worker, at most `limit`, only when due, only for live jobs), renewal, reclaiming expired leases,
// handing work back on shutdown, the planner's lease (including a planner that died after committing
// a batch), the outcome of one object as runObject records it (retry with backoff, the attempt limit,
// a lost lease), and the backoff policy itself. Rows are written directly and time is a ManualClock,
// so nothing here sleeps or needs a storage server.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/db/database.js';
import type { EngineContext } from '../../src/engine/context.js';
import { FairShare } from '../../src/engine/fair-share.js';
import { PLAN_BATCH, planJob } from '../../src/engine/planner.js';
import { runObject } from '../../src/engine/run-object.js';
import type { StoreCache } from '../../src/engine/store-cache.js';
import { FerryError } from '../../src/errors.js';
import * as jobs from '../../src/lifecycle/jobs.js';
import { keyHash, plan } from '../../src/lifecycle/object-planning.js';
import { WORKER_LEASES } from '../../src/lifecycle/worker-leases.js';
import { createLogger } from '../../src/log.js';
import { backoffMs, DEFAULT_CRASH_POLICY, MAX_ATTEMPTS, retryable } from '../../src/queue/backoff.js';
import { JOB_OBJECTS, TRANSFERS } from '../../src/queue/leased.js';
import * as leases from '../../src/queue/leases.js';
import type { Lease } from '../../src/queue/moves.js';
import type { JobStatus, ObjectStatus } from '../../src/states.js';
import type { ObjectInfo, Store } from '../../src/stores/contract.js';
import { LogCapture, ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { deferred } from '../support/deferred.js';
import { eachDatabase } from '../support/fixtures.js';

// The worker's calls into the lifecycle modules, by the names this file's tests use.
async function claimObjects(db: Db, lease: Lease, limit: number) {
  return (await new FairShare(db, 100_000).claim(lease, limit)).objects;
}
const claimPlanning = (db: Db, lease: Lease) => jobs.claimPlanning(db.kysely, db.dialect, lease);
async function reclaimExpired(db: Db, now: number): Promise<number> {
  const policy = DEFAULT_CRASH_POLICY;
  return (
    (await leases.reclaimExpired(db.kysely, JOB_OBJECTS, now, policy)) +
    (await leases.reclaimExpired(db.kysely, TRANSFERS, now, policy))
  );
}
async function renewLeases(db: Db, owner: string, until: number): Promise<void> {
  await leases.renewAll(db.kysely, WORKER_LEASES, owner, until);
}
async function releaseLeases(db: Db, owner: string, now: number): Promise<void> {
  await leases.handBackAll(db.kysely, WORKER_LEASES, owner, now);
}

const LEASE_MS = 30_000;

describe('backoff', () => {
  const throttled = (seconds?: number) =>
    new FerryError('throttled', 'SlowDown', seconds === undefined ? {} : { retryAfterSeconds: seconds });

  test('doubles per attempt from 1 s, half fixed and half random, capped at 60 s', () => {
    const err = new FerryError('transient', 'reset');
    for (const [attempts, full] of [
      [1, 1000],
      [2, 2000],
      [3, 4000],
      [4, 8000],
      [7, 60_000],
      [30, 60_000],
    ] as const) {
      assert.equal(
        backoffMs(attempts, err, () => 0),
        full / 2,
        `attempt ${attempts}, least`,
      );
      assert.equal(
        backoffMs(attempts, err, () => 1),
        full,
        `attempt ${attempts}, most`,
      );
    }
  });

  test('never waits less than the provider asked for with Retry-After', () => {
    assert.equal(
      backoffMs(1, throttled(7), () => 0),
      7000,
    );
    assert.equal(
      backoffMs(1, throttled(0), () => 0),
      500,
    );
    assert.equal(
      backoffMs(4, throttled(1), () => 1),
      8000,
      'a shorter Retry-After does not shorten the backoff',
    );
    assert.equal(
      backoffMs(1, throttled(120), () => 0),
      120_000,
      'Retry-After is honoured beyond the cap',
    );
  });

  test('retries passing failures only', () => {
    assert.equal(retryable(throttled()), true);
    assert.equal(retryable(new FerryError('transient', 'reset')), true);
    for (const kind of [
      'not_found',
      'invalid',
      'credentials_rejected',
      'forbidden',
      'unsupported',
    ] as const) {
      assert.equal(retryable(new FerryError(kind, kind)), false, kind);
    }
    assert.equal(retryable(new Error('a bug')), false);
    assert.equal(MAX_ATTEMPTS, 5);
  });
});

await eachDatabase('queue', (database) => {
  let t: TestApp;
  let db: Db;
  let workspaceId: string;
  const clock = new ManualClock();

  before(async () => {
    t = await startTestApp(database, { clock });
    db = t.services.db;
    const ws = await db.kysely.selectFrom('workspaces').select('id').executeTakeFirstOrThrow();
    workspaceId = ws.id;
  });
  after(async () => {
    await t.close();
  });

  const lease = (owner: string, ms = LEASE_MS): Lease => {
    const now = clock.now();
    return { owner, now, until: now + ms };
  };

  async function newJob(
    objects: number,
    fields: { status?: JobStatus; planning_done?: number; manifest?: string[] } = {},
  ): Promise<string> {
    const id = randomUUID();
    const now = clock.now();
    await db.kysely
      .insertInto('jobs')
      .values({
        id,
        workspace_id: workspaceId,
        location_ids: ',',
        status: fields.status ?? 'running',
        source: JSON.stringify({ location_id: 'loc-src', path: 'bucket/from/' }),
        destination: JSON.stringify({ location_id: 'loc-dst', path: 'bucket/to/' }),
        overwrite: 'always',
        has_manifest: fields.manifest ? 1 : 0,
        planning_done: fields.planning_done ?? 1,
        error: null,
        lease_owner: null,
        lease_expires_at: null,
        created_at: now,
        updated_at: now,
        started_at: null,
        finished_at: null,
      })
      .execute();
    if (fields.manifest) {
      await db.kysely
        .insertInto('job_manifests')
        .values({ job_id: id, keys: JSON.stringify(fields.manifest) })
        .execute();
    }
    // Through the lifecycle, as the planner does, so the job's counters are kept.
    await plan(
      db.kysely,
      id,
      0,
      Array.from({ length: objects }, (_, seq) => ({
        key: `k${seq}`,
        keyHash: keyHash(`k${seq}`),
        size: 3,
        etag: null,
      })),
    );
    return id;
  }

  const objects = (jobId: string) =>
    db.kysely.selectFrom('job_objects').selectAll().where('job_id', '=', jobId).orderBy('seq').execute();
  const job = (jobId: string) =>
    db.kysely.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
  const setObjects = (jobId: string, values: { run_after?: number; status?: ObjectStatus }, seqs: number[]) =>
    db.kysely
      .updateTable('job_objects')
      .set(values)
      .where('job_id', '=', jobId)
      .where('seq', 'in', seqs)
      .execute();

  /** Claims of earlier tests must not leak into the next: every pending object is taken off the queue. */
  async function drain(): Promise<void> {
    await db.kysely.updateTable('job_objects').set({ status: 'succeeded' }).execute();
    await db.kysely.updateTable('jobs').set({ status: 'complete' }).execute();
  }

  test('a claim takes due pending objects of live jobs, at most `limit`, each once, counting the attempt', async () => {
    await drain();
    const id = await newJob(10);
    const later = clock.now() + 60_000;
    await setObjects(id, { run_after: later }, [8, 9]);
    const dead = await newJob(3, { status: 'canceled' });
    const finished = await newJob(3, { status: 'partial' });

    const a = await claimObjects(db, lease('worker-a'), 5);
    assert.equal(a.length, 5);
    for (const row of a) {
      assert.equal(row.job_id, id);
      assert.equal(row.status, 'running');
      assert.equal(row.lease_owner, 'worker-a');
      assert.equal(Number(row.lease_expires_at), clock.now() + LEASE_MS);
      assert.equal(row.attempts, 1);
      assert.equal(Number(row.last_attempt_at), clock.now());
    }
    const b = await claimObjects(db, lease('worker-b'), 10);
    assert.deepEqual(
      b.map((r) => r.seq).sort((x, y) => x - y),
      [0, 1, 2, 3, 4, 5, 6, 7].filter((s) => !a.some((r) => r.seq === s)),
      'the rest of the due objects, none claimed twice',
    );
    assert.deepEqual(
      await claimObjects(db, lease('worker-c'), 10),
      [],
      'backoff, canceled and finished jobs wait',
    );

    clock.set(later);
    const c = await claimObjects(db, lease('worker-c'), 10);
    assert.deepEqual(c.map((r) => r.seq).sort(), [8, 9]);
    for (const other of [dead, finished]) {
      assert.ok((await objects(other)).every((r) => r.status === 'pending' && r.attempts === 0));
    }
  });

  test('many workers claiming at once never get the same object', async () => {
    await drain();
    const id = await newJob(300);
    const seen: string[][] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        const mine: string[] = [];
        seen.push(mine);
        for (;;) {
          const rows = await claimObjects(db, lease(`worker-${w}`), 7);
          if (rows.length === 0) break;
          mine.push(...rows.map((r) => `${r.job_id}/${r.seq}`));
        }
      }),
    );
    const all = seen.flat();
    assert.equal(all.length, 300, 'every object claimed');
    assert.equal(new Set(all).size, 300, 'no object claimed twice');
    const rows = await objects(id);
    assert.ok(rows.every((r) => r.status === 'running' && r.attempts === 1));
    if (database.name === 'postgres') {
      assert.ok(seen.filter((s) => s.length > 0).length > 1, 'the work was spread over several workers');
    }
  });

  test('renewal extends only the owner’s running leases; expired ones go back to the queue with the attempt counted', async () => {
    await drain();
    const id = await newJob(4);
    await claimObjects(db, lease('alive', 10_000), 2);
    await claimObjects(db, lease('dead', 10_000), 2);
    clock.advance(8000);
    await renewLeases(db, 'alive', clock.now() + 10_000);
    clock.advance(5000);
    assert.equal(await reclaimExpired(db, clock.now()), 2);
    const rows = await objects(id);
    const alive = rows.filter((r) => r.lease_owner === 'alive');
    assert.equal(alive.length, 2);
    assert.ok(alive.every((r) => r.status === 'running' && Number(r.lease_expires_at) > clock.now()));
    const back = rows.filter((r) => r.lease_owner === null);
    assert.equal(back.length, 2);
    assert.ok(back.every((r) => r.status === 'pending' && r.lease_expires_at === null && r.attempts === 1));
    assert.equal(await reclaimExpired(db, clock.now()), 0, 'reclaiming twice changes nothing');
    const again = await claimObjects(db, lease('survivor'), 10);
    assert.deepEqual(
      again.map((r) => r.attempts),
      [2, 2],
      'the crashed attempt counts',
    );
  });

  test('on shutdown a worker hands back its objects without counting the interrupted attempt', async () => {
    await drain();
    const id = await newJob(3);
    await claimObjects(db, lease('leaving'), 2);
    await claimObjects(db, lease('staying'), 1);
    await releaseLeases(db, 'leaving', clock.now());
    const rows = await objects(id);
    assert.equal(rows.filter((r) => r.status === 'pending' && r.attempts === 0 && !r.lease_owner).length, 2);
    assert.equal(rows.filter((r) => r.status === 'running' && r.lease_owner === 'staying').length, 1);
  });

  test('a planning job goes to one planner at a time, to another when its lease runs out, and not during a backoff', async () => {
    await drain();
    const id = await newJob(0, { status: 'planning', planning_done: 0 });
    const first = await claimPlanning(db, lease('planner-a', 10_000));
    assert.equal(first?.id, id);
    assert.equal(first?.planning_attempts, 1);
    assert.equal(await claimPlanning(db, lease('planner-b')), undefined, 'held by planner-a');
    clock.advance(10_001);
    const second = await claimPlanning(db, lease('planner-b'));
    assert.equal(second?.id, id, 'planner-a died: planner-b takes over');
    assert.equal(second?.planning_attempts, 2);
    // A planner backing off leaves no owner and a lease end in the future.
    await db.kysely
      .updateTable('jobs')
      .set({ lease_owner: null, lease_expires_at: clock.now() + 5000 })
      .where('id', '=', id)
      .execute();
    assert.equal(await claimPlanning(db, lease('planner-c')), undefined);
    clock.advance(5001);
    assert.equal((await claimPlanning(db, lease('planner-c')))?.id, id);
  });

  test('a job whose planner died after committing some objects is planned to the end by another', async () => {
    await drain();
    // As a planner leaves a manifest job when it dies after its first batch: running, objects
    // 0..PLAN_BATCH-1 recorded, planning not done, the lease held by a process that is gone.
    const keys = Array.from({ length: PLAN_BATCH * 2 + 500 }, (_, i) => `k${i}`);
    const id = await newJob(PLAN_BATCH, { status: 'running', planning_done: 0, manifest: keys });
    await db.kysely
      .updateTable('jobs')
      .set({ planned_count: PLAN_BATCH, lease_owner: 'dead-planner', lease_expires_at: clock.now() + 1000 })
      .where('id', '=', id)
      .execute();
    assert.equal(await claimPlanning(db, lease('planner-b')), undefined, 'not while its lease lasts');

    clock.advance(1001);
    const claimed = await claimPlanning(db, lease('planner-b'));
    assert.equal(claimed?.id, id, 'a running job that is not fully planned is planned on');
    const ctx: EngineContext = {
      db,
      clock,
      logger: createLogger('silent', new LogCapture()),
      stores: undefined as unknown as StoreCache,
      owner: 'planner-b',
    };
    await planJob(ctx, claimed, new AbortController().signal);
    const after = await job(id);
    assert.equal(after.planning_done, 1);
    assert.equal(after.lease_owner, null);
    const rows = await objects(id);
    assert.equal(rows.length, keys.length, 'every key once');
    assert.deepEqual(new Set(rows.map((r) => r.key)), new Set(keys));

    // Once planned, a running job is not the planners' any more.
    await db.kysely.updateTable('jobs').set({ lease_expires_at: 0 }).where('id', '=', id).execute();
    assert.equal(await claimPlanning(db, lease('planner-c')), undefined);
  });

  /** A store on which the server-side copy of every object does what `copy` says. */
  function fakeStores(copy: (signal: AbortSignal | undefined) => Promise<void>): StoreCache {
    const info = (path: string): ObjectInfo => ({ path, size: 3, hashes: {} });
    const store = {
      provider: 's3',
      account: 'fake',
      features: {
        bucketListing: true,
        hashes: [],
        upload: { singleRequestMax: 1, partSize: 1, maxParts: 1 },
        copy: async (_from: string, to: string, options?: { signal?: AbortSignal }) => {
          await copy(options?.signal);
          return info(to);
        },
      },
      stat: async (path: string) => info(path),
      close: async () => {},
    } as unknown as Store;
    const use = { row: {}, store, release: () => {} };
    return {
      acquire: async () => use,
      use: async (_id: string, work: (u: typeof use) => Promise<unknown>) => work(use),
      close: async () => {},
    } as unknown as StoreCache;
  }

  async function runOne(owner: string, copy: (signal: AbortSignal | undefined) => Promise<void>) {
    const [row] = await claimObjects(db, lease(owner), 1);
    assert.ok(row, 'an object to run');
    const ctx: EngineContext = {
      db,
      clock,
      logger: createLogger('silent', new LogCapture()),
      stores: fakeStores(copy),
      owner,
    };
    await runObject(ctx, row, new AbortController().signal);
    return row;
  }

  test('runObject: a throttled object waits at least its Retry-After, then fails for good after the last attempt', async () => {
    await drain();
    const id = await newJob(1);
    const slowDown = async () => {
      throw new FerryError('throttled', 'copy: SlowDown: Please reduce your request rate. (HTTP 503)', {
        retryAfterSeconds: 3,
      });
    };
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      await runOne('w', slowDown);
      const [row] = await objects(id);
      assert.equal(row?.status, 'pending', `attempt ${attempt}`);
      assert.equal(row?.attempts, attempt);
      assert.match(String(row?.error), /SlowDown/);
      const wait = Number(row?.run_after) - clock.now();
      assert.ok(wait >= 3000, `attempt ${attempt} waits ${wait} ms`);
      assert.ok(wait <= Math.max(3000, 1000 * 2 ** (attempt - 1)), `attempt ${attempt} waits ${wait} ms`);
      assert.deepEqual(await claimObjects(db, lease('early'), 1), [], 'not before the backoff is over');
      clock.set(Number(row?.run_after));
    }
    await runOne('w', slowDown);
    const [last] = await objects(id);
    assert.equal(last?.status, 'failed');
    assert.equal(last?.attempts, MAX_ATTEMPTS);
    assert.match(String(last?.error), /SlowDown/);
    assert.equal((await job(id)).status, 'failed', 'the only object failed: the job failed');
  });

  test('runObject: a non-retryable failure is final at once; the job is partial when others succeeded', async () => {
    await drain();
    const id = await newJob(2);
    await runOne('w', async () => {});
    await runOne('w', async () => {
      throw new FerryError('not_found', 'copy bucket/from/k1: NoSuchKey (HTTP 404)');
    });
    const rows = await objects(id);
    assert.deepEqual(
      rows.map((r) => [r.status, r.attempts]),
      [
        ['succeeded', 1],
        ['failed', 1],
      ],
    );
    assert.match(String(rows[1]?.error), /NoSuchKey/);
    assert.equal((await job(id)).status, 'partial');
  });

  test('runObject: a worker whose lease was taken over cannot record its outcome', async () => {
    await drain();
    const id = await newJob(1);
    const gate = deferred();
    const copying = deferred();
    // The stalled worker holds the object past its lease; another takes it over and is still running
    // when the stalled one finally answers (with a failure that would otherwise be recorded).
    const stalled = runOne('stalled', async () => {
      copying.resolve();
      await gate.promise;
      throw new FerryError('not_found', 'too late');
    });
    // The stalled worker has claimed the object and is inside its copy.
    await copying.promise;
    clock.advance(LEASE_MS + 1);
    assert.equal(await reclaimExpired(db, clock.now()), 1);
    const [taken] = await claimObjects(db, lease('successor'), 1);
    assert.equal(taken?.lease_owner, 'successor');
    gate.resolve();
    await stalled;
    const [row] = await objects(id);
    assert.equal(row?.status, 'running');
    assert.equal(row?.lease_owner, 'successor');
    assert.equal(row?.error, null);
    assert.equal((await job(id)).status, 'running');
  });
});
