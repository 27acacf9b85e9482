// Fair share between workspaces (docs/engine.md, "Fair share"): how free slots are handed out, the
// per-workspace ceiling under concurrent claims, and the rule the feature exists for: a single copy in
// workspace B runs while workspace A's 20,000-object job is under way, on SQLite in one process and on
// PostgreSQL with two worker processes.
//
// A's job copies a manifest of 20,000 keys that do not exist at the source: each object is one stat
// that fails at once, so the job keeps every worker slot busy for many seconds without seeding
// 20,000 objects. B's copy is one real object. Without fair share B's transfer would wait until every
// one of A's objects had been claimed, so "most of A's objects were still pending when B's copy
// completed" tells the two apart by thousands of objects, not by a timing window.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Db } from '../../src/db/database.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { allot, FairShare } from '../../src/engine/fair-share.js';
import type { Lease } from '../../src/queue/moves.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { testDatabases } from '../support/databases.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type FerryProcess, killAll, startServe } from '../support/processes.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import {
  type Call,
  createLocation,
  newWorkspace,
  s3Client,
  seedBucket,
  waitFor,
} from '../support/transfers.js';

describe('allot: free slots go to the workspace running the least', () => {
  test('slots alternate between equally busy workspaces, in the order given', () => {
    const got = allot(
      [
        { workspaceId: 'a', running: 0 },
        { workspaceId: 'b', running: 0 },
      ],
      5,
      100,
    );
    assert.deepEqual(Object.fromEntries(got), { a: 3, b: 2 });
  });

  test('a busy workspace gets nothing until the others have caught up', () => {
    const got = allot(
      [
        { workspaceId: 'a', running: 10 },
        { workspaceId: 'b', running: 2 },
        { workspaceId: 'c', running: 0 },
      ],
      10,
      100,
    );
    // c takes two to reach b's 2, then b and c alternate up to 6 each; a (10) is never the least.
    assert.deepEqual(Object.fromEntries(got), { b: 4, c: 6 });
  });

  test('the ceiling holds even when slots are left over', () => {
    const got = allot([{ workspaceId: 'a', running: 3 }], 10, 5);
    assert.deepEqual(Object.fromEntries(got), { a: 2 });
    assert.equal(allot([{ workspaceId: 'a', running: 5 }], 10, 5).size, 0);
  });
});

await eachDatabase('fair share: claims', (database) => {
  let t: TestApp;
  let db: Db;
  const clock = new ManualClock(Date.UTC(2026, 10, 24, 9));
  const lease = (owner: string): Lease => ({ owner, now: clock.now(), until: clock.now() + 30_000 });

  before(async () => {
    t = await startTestApp(database, { clock });
    db = t.services.db;
  });
  after(() => t?.close());

  async function workspace(): Promise<string> {
    return (await ensureWorkspace(db.kysely, unique('ws'), clock)).id;
  }

  async function job(workspaceId: string, objects: number): Promise<string> {
    const id = randomUUID();
    const ref = JSON.stringify({ location_id: randomUUID(), path: 'b/p/' });
    await db.kysely
      .insertInto('jobs')
      .values({
        id,
        workspace_id: workspaceId,
        location_ids: ',',
        status: 'running',
        source: ref,
        destination: ref,
        overwrite: 'always',
        planning_done: 1,
        planned_count: objects,
        error: null,
        lease_owner: null,
        lease_expires_at: null,
        created_at: clock.now(),
        updated_at: clock.now(),
        started_at: clock.now(),
        finished_at: null,
      })
      .execute();
    for (let from = 0; from < objects; from += 500) {
      await db.kysely
        .insertInto('job_objects')
        .values(
          Array.from({ length: Math.min(500, objects - from) }, (_, i) => ({
            job_id: id,
            seq: from + i,
            key: `k${from + i}`,
            key_hash: `${id}-${from + i}`,
            status: 'pending' as const,
            size: 1,
            source_etag: null,
            error: null,
            last_attempt_at: null,
            lease_owner: null,
            lease_expires_at: null,
          })),
        )
        .execute();
    }
    return id;
  }

  async function transfer(workspaceId: string): Promise<string> {
    const id = randomUUID();
    await db.kysely
      .insertInto('transfers')
      .values({
        id,
        workspace_id: workspaceId,
        location_ids: ',',
        kind: 'copy',
        status: 'queued',
        spec: '{}',
        bytes_total: null,
        error: null,
        lease_owner: null,
        lease_expires_at: null,
        created_at: clock.now(),
        updated_at: clock.now(),
        started_at: null,
        finished_at: null,
      })
      .execute();
    return id;
  }

  /** Nothing left from the previous test to claim. */
  async function drain(): Promise<void> {
    await db.kysely.updateTable('jobs').set({ status: 'complete' }).execute();
    await db.kysely.updateTable('transfers').set({ status: 'complete' }).execute();
    await db.kysely.updateTable('job_objects').set({ status: 'succeeded' }).execute();
  }

  test("a small claim still gives another workspace's single transfer a slot", async () => {
    await drain();
    const [a, b] = [await workspace(), await workspace()];
    await job(a, 1000);
    const single = await transfer(b);
    const claimed = await new FairShare(db, 100).claim(lease('w1'), 4);
    assert.deepEqual(
      claimed.transfers.map((r) => r.id),
      [single],
    );
    assert.equal(claimed.objects.length, 3, 'the rest of the slots go to the job');
  });

  test("two jobs of one workspace share its slots; a newer workspace's job is not starved by an older one", async () => {
    await drain();
    const [a, b] = [await workspace(), await workspace()];
    const [a1, a2] = [await job(a, 100), await job(a, 100)];
    const b1 = await job(b, 100);
    const claimed = await new FairShare(db, 100).claim(lease('w1'), 8);
    const per = (id: string) => claimed.objects.filter((o) => o.job_id === id).length;
    assert.equal(per(b1), 4, 'half of the slots to each workspace');
    assert.equal(per(a1), 2, 'and within a, half to each of its jobs');
    assert.equal(per(a2), 2);
  });

  test('the per-workspace ceiling holds while eight workers claim at once', async () => {
    await drain();
    const a = await workspace();
    const id = await job(a, 200);
    const fair = new FairShare(db, 5);
    const claims = await Promise.all(Array.from({ length: 8 }, (_, w) => fair.claim(lease(`w${w}`), 4)));
    assert.equal(claims.flatMap((c) => c.objects).length, 5, 'exactly the ceiling, across all of them');
    const running = await db.kysely
      .selectFrom('job_objects')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('job_id', '=', id)
      .where('status', '=', 'running')
      .executeTakeFirstOrThrow();
    assert.equal(Number(running.n), 5);
    assert.equal((await fair.claim(lease('late'), 4)).objects.length, 0, 'nothing more while five run');
  });
});

const JOB_OBJECTS = 20_000;

interface JobView {
  status: string;
  counts: { total: number; pending: number };
}

/** B's single copy completes while A's 20,000-object job is still mostly pending. */
async function singleCopyIsNotStarved(api: TestApp, s3: S3rverHandle, client: S3Client): Promise<void> {
  const callA: Call = (options) => api.request(options);
  const callB = await newWorkspace(api);
  const secret = { access_key_id: 'FERRYKEY', secret_access_key: 'secret' };
  const metadata = { endpoint: s3.endpoint, region: 'us-east-1', force_path_style: true };
  const [a, b] = await Promise.all([
    createLocation(callA, { provider: 's3', secret, metadata }),
    createLocation(callB, { provider: 's3', secret, metadata }),
  ]);
  const bucket = await seedBucket(client, { 'single.txt': 'the one object workspace b waits for' });

  const manifest = Array.from({ length: JOB_OBJECTS }, (_, i) => `missing-${i}`);
  const bulk = await callA({
    method: 'POST',
    url: '/v1/copy',
    payload: { from: `${a.id}:${bucket}/nothing/`, to: `${a.id}:${bucket}/out/`, manifest },
  });
  assert.equal(bulk.statusCode, 202, bulk.body);
  const jobId = bulk.json().job_id as string;
  // A's job is planned and its objects are running before B asks for anything.
  await waitFor(callA, `/v1/jobs/${jobId}`, (j) => {
    const job = j as unknown as JobView;
    return job.counts.total === JOB_OBJECTS && job.counts.pending < JOB_OBJECTS;
  });

  const single = await callB({
    method: 'POST',
    url: '/v1/copy',
    payload: { from: `${b.id}:${bucket}/single.txt`, to: `${b.id}:${bucket}/copied.txt` },
  });
  assert.equal(single.statusCode, 202, single.body);
  const done = await waitFor(callB, `/v1/transfers/${single.json().id}`);
  assert.equal(done.status, 'complete', JSON.stringify(done));

  const job = (await callA({ method: 'GET', url: `/v1/jobs/${jobId}` })).json() as JobView;
  assert.ok(
    job.counts.pending > JOB_OBJECTS / 2,
    `b's copy completed only after ${JOB_OBJECTS - job.counts.pending} of a's objects had been claimed`,
  );
  const canceled = await callA({ method: 'POST', url: `/v1/jobs/${jobId}/cancel` });
  assert.equal(canceled.statusCode, 202, canceled.body);
}

describe('fair share: a single copy runs while another workspace has a 20,000-object job', () => {
  let s3: S3rverHandle;
  let client: S3Client;

  before(async () => {
    s3 = await startS3rver();
    client = s3Client(s3.endpoint);
  });
  after(async () => {
    client?.destroy();
    await s3?.close();
  });

  test('[sqlite] one process, four slots', async () => {
    const sqlite = (await testDatabases()).find((d) => d.name === 'sqlite');
    assert.ok(sqlite);
    const api = await startTestApp(sqlite, {
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' },
      worker: { concurrency: 4 },
    });
    try {
      await singleCopyIsNotStarved(api, s3, client);
    } finally {
      await api.close();
    }
  });

  test('[postgres] an API process and two worker processes, four slots each', async (ctx) => {
    const postgres = (await testDatabases()).find((d) => d.name === 'postgres');
    if (!postgres || postgres.skip) {
      ctx.skip(postgres?.skip ?? 'no PostgreSQL');
      return;
    }
    const api = await startTestApp(postgres, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' } });
    const dirs: string[] = [];
    try {
      const env = {
        FERRY_DATABASE_URL: api.config.databaseUrl?.reveal() ?? '',
        FERRY_MASTER_KEY: api.config.masterKey?.reveal() ?? '',
        FERRY_EGRESS_ALLOW: '127.0.0.1/32',
        FERRY_WORKER_CONCURRENCY: '4',
        FERRY_ROLE: 'worker',
      };
      const workers: FerryProcess[] = await Promise.all(
        ['worker-1', 'worker-2'].map((name) => {
          const dir = mkdtempSync(join(tmpdir(), 'ferry-fair-'));
          dirs.push(dir);
          return startServe(name, { ...env, FERRY_DATA_DIR: dir });
        }),
      );
      assert.equal(workers.length, 2);
      await singleCopyIsNotStarved(api, s3, client);
    } finally {
      await killAll();
      await api.close();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });
});
