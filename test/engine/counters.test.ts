// A job's counters (objects by state, finished bytes) are kept by the object lifecycle in the same
// transaction as each move, so reading a job costs one row at any size. Here every move that can
// happen to a job's objects happens, including the ones a crash causes (a planner that dies and
// commits its keys again, a worker whose lease runs out while another takes its objects, a stale
// worker settling afterwards, a stopping worker handing work back), a retry and a cancel; after each
// step the counters must equal a count of the rows.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Db } from '../../src/db/database.js';
import * as jobs from '../../src/lifecycle/jobs.js';
import { keyHash } from '../../src/lifecycle/object-planning.js';
import { countByStatus } from '../../src/lifecycle/object-reads.js';
import { type ObjectSettlement, settle, settleMany } from '../../src/lifecycle/object-settlement.js';
import * as objects from '../../src/lifecycle/objects.js';
import { DEFAULT_CRASH_POLICY } from '../../src/queue/backoff.js';
import { JOB_OBJECTS } from '../../src/queue/leased.js';
import { handBackLeases, reclaimExpired } from '../../src/queue/leases.js';
import type { Lease } from '../../src/queue/moves.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';
import { bareJob } from '../support/jobs.js';

await eachDatabase('job counters', (database) => {
  let t: TestApp;
  let db: Db;
  const clock = new ManualClock(Date.UTC(2026, 10, 24, 9));
  const lease = (owner: string): Lease => ({ owner, now: clock.now(), until: clock.now() + 10_000 });

  before(async () => {
    t = await startTestApp(database, { clock });
    db = t.services.db;
  });
  after(() => t?.close());

  const newJob = async () => (await bareJob(db, clock, 'counters')).jobId;

  const planned = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, i) => {
      const key = `key-${from + i}`;
      return { key, keyHash: keyHash(key), size: 10, etag: null };
    });

  /** The counters equal a count of the rows, and the finished bytes their sum. */
  async function assertCounted(jobId: string, step: string): Promise<void> {
    const job = await db.kysely
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow();
    const rows = await countByStatus(db.kysely, jobId);
    const finished = await db.kysely
      .selectFrom('job_objects')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('bytes_done'), eb.lit(0)).as('bytes'))
      .where('job_id', '=', jobId)
      .where('status', 'in', ['succeeded', 'skipped'])
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      {
        total: Number(job.objects_total),
        pending: Number(job.objects_pending),
        succeeded: Number(job.objects_succeeded),
        skipped: Number(job.objects_skipped),
        failed: Number(job.objects_failed),
        bytes: Number(job.bytes_finished),
      },
      {
        total: rows.pending + rows.running + rows.succeeded + rows.skipped + rows.failed,
        pending: rows.pending + rows.running,
        succeeded: rows.succeeded,
        skipped: rows.skipped,
        failed: rows.failed,
        bytes: Number(finished.bytes),
      },
      `after ${step}`,
    );
  }

  test('the counters equal a count after a planner restart, lost leases, stale workers, a shutdown and a retry', async () => {
    const id = await newJob();
    const planner = lease('planner-1');
    await db.kysely.updateTable('jobs').set({ lease_owner: planner.owner }).where('id', '=', id).execute();
    assert.ok(await jobs.commitBatch(db.kysely, planner.owner, id, 0, planned(0, 30), clock.now()));
    // The planner died; its successor lists again from the start: 30 keys it had, 10 new.
    await db.kysely.updateTable('jobs').set({ lease_owner: 'planner-2' }).where('id', '=', id).execute();
    assert.ok(await jobs.commitBatch(db.kysely, 'planner-2', id, 30, planned(0, 40), clock.now()));
    await jobs.planningDone(db.kysely, 'planner-2', id, clock.now());
    await assertCounted(id, 'planning with a restart');

    const a = await objects.claim(db.kysely, db.dialect, lease('worker-a'), id, 10);
    const b = await objects.claim(db.kysely, db.dialect, lease('worker-b'), id, 10);
    for (const [i, row] of a.entries()) {
      if (i < 4) await settle(db.kysely, 'worker-a', row, { kind: 'done', bytes: 10 });
      else if (i < 6) await settle(db.kysely, 'worker-a', row, { kind: 'done', bytes: 0, skipped: true });
      else if (i < 8) await settle(db.kysely, 'worker-a', row, { kind: 'failed', error: 'gone' });
      else
        await settle(db.kysely, 'worker-a', row, {
          kind: 'again',
          error: 'slow',
          runAfter: clock.now(),
        });
    }
    await assertCounted(id, 'settling');

    // worker-b stalls past its lease; its objects are reclaimed and taken by worker-c.
    clock.advance(20_000);
    assert.equal(await reclaimExpired(db.kysely, JOB_OBJECTS, clock.now(), DEFAULT_CRASH_POLICY), 10);
    const c = await objects.claim(db.kysely, db.dialect, lease('worker-c'), id, 40);
    assert.ok(c.length >= 10);
    // The stale worker-b finishes now: nothing it says is written or counted.
    for (const row of b) {
      assert.equal(await settle(db.kysely, 'worker-b', row, { kind: 'done', bytes: 10 }), false);
    }
    await assertCounted(id, 'a lost lease and a stale worker');

    // worker-c stops: what it holds goes back; then another worker finishes everything.
    await handBackLeases(db.kysely, JOB_OBJECTS, 'worker-c');
    await assertCounted(id, 'a shutdown');
    for (;;) {
      const rows = await objects.claim(db.kysely, db.dialect, lease('worker-d'), id, 16);
      if (rows.length === 0) break;
      for (const row of rows) {
        const failed = row.seq % 5 === 0;
        await settle(
          db.kysely,
          'worker-d',
          row,
          failed ? { kind: 'failed', error: 'no' } : { kind: 'done', bytes: 7 },
        );
      }
    }
    await assertCounted(id, 'every object settled');
    assert.equal(await jobs.finishIfDone(db.kysely, id, clock.now()), 'partial');

    assert.ok(await jobs.retry(db.kysely, id, clock.now()));
    await assertCounted(id, 'a retry');
    const retried = await objects.claim(db.kysely, db.dialect, lease('worker-e'), id, 100);
    assert.ok(retried.length > 0);
    for (const row of retried) await settle(db.kysely, 'worker-e', row, { kind: 'done', bytes: 1 });
    // The retried job is planned again (it was fully planned: straight back to running), then ends.
    const replanned = await jobs.claimPlanning(db.kysely, db.dialect, lease('planner-3'));
    assert.equal(replanned?.id, id);
    await jobs.planningDone(db.kysely, 'planner-3', id, clock.now());
    assert.equal(await jobs.finishIfDone(db.kysely, id, clock.now()), 'complete');
    await assertCounted(id, 'the retried objects succeeding');
  });

  test('a canceled job keeps counting what it left pending, and its parked objects are never claimed', async () => {
    const id = await newJob();
    await db.kysely.updateTable('jobs').set({ lease_owner: 'planner' }).where('id', '=', id).execute();
    await jobs.commitBatch(db.kysely, 'planner', id, 0, planned(0, 20), clock.now());
    const [first] = await objects.claim(db.kysely, db.dialect, lease('worker'), id, 5);
    assert.ok(first);
    await settle(db.kysely, 'worker', first, { kind: 'done', bytes: 3 });
    assert.ok(await jobs.cancel(db.kysely, id, clock.now()));
    await objects.park(db.kysely, [id], 'worker');
    await assertCounted(id, 'a cancel');
    const job = await db.kysely.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(Number(job.objects_pending), 19);
    assert.deepEqual(await objects.claim(db.kysely, db.dialect, lease('late'), id, 50), []);
  });

  test('one batch of settlements across two jobs writes each row its own status and size, and none whose lease was lost', async () => {
    const [x, y] = [await newJob(), await newJob()];
    for (const id of [x, y]) {
      await db.kysely.updateTable('jobs').set({ lease_owner: 'planner' }).where('id', '=', id).execute();
      await jobs.commitBatch(db.kysely, 'planner', id, 0, planned(0, 4), clock.now());
    }
    const xs = await objects.claim(db.kysely, db.dialect, lease('w'), x, 4);
    const ys = await objects.claim(db.kysely, db.dialect, lease('w'), y, 4);
    // One of y's objects was taken by another worker meanwhile.
    const lost = ys[3];
    assert.ok(lost && xs.length === 4 && ys.length === 4);
    await db.kysely
      .updateTable('job_objects')
      .set({ lease_owner: 'other' })
      .where('job_id', '=', y)
      .where('seq', '=', lost.seq)
      .execute();
    const settlements = [
      { object: xs[0], settlement: { kind: 'done', bytes: 11 } },
      { object: ys[0], settlement: { kind: 'done', bytes: 22 } },
      { object: xs[1], settlement: { kind: 'done', bytes: 0, skipped: true } },
      { object: xs[2], settlement: { kind: 'failed', error: 'gone' } },
      { object: ys[1], settlement: { kind: 'done', bytes: 33 } },
      { object: xs[3], settlement: { kind: 'again', error: 'slow', runAfter: clock.now() + 1000 } },
      { object: ys[2], settlement: { kind: 'done', bytes: 44, skipped: true } },
      { object: lost, settlement: { kind: 'done', bytes: 55 } },
    ] as ObjectSettlement[];
    const written = await settleMany(db.kysely, 'w', settlements);
    assert.deepEqual(written, [true, true, true, true, true, true, true, false]);
    const rows = await db.kysely
      .selectFrom('job_objects')
      .select(['job_id', 'seq', 'status', 'size', 'bytes_done', 'lease_owner'])
      .where('job_id', 'in', [x, y])
      .orderBy('job_id')
      .orderBy('seq')
      .execute();
    const of = (job: string, seq: number) => {
      const r = rows.find((row) => row.job_id === job && row.seq === seq);
      return [r?.status, r?.bytes_done === null ? null : Number(r?.bytes_done), r?.lease_owner];
    };
    const seq = (row: { seq: number } | undefined) => row?.seq ?? -1;
    assert.deepEqual(of(x, seq(xs[0])), ['succeeded', 11, null]);
    assert.deepEqual(of(x, seq(xs[1])), ['skipped', 0, null]);
    assert.deepEqual(of(x, seq(xs[2]))[0], 'failed');
    assert.deepEqual(of(x, seq(xs[3]))[0], 'pending');
    assert.deepEqual(of(y, seq(ys[0])), ['succeeded', 22, null]);
    assert.deepEqual(of(y, seq(ys[1])), ['succeeded', 33, null]);
    assert.deepEqual(of(y, seq(ys[2])), ['skipped', 44, null]);
    assert.deepEqual(of(y, seq(lost)), ['running', 0, 'other'], 'the lost one is untouched');
    await assertCounted(x, 'a mixed batch (x)');
    await assertCounted(y, 'a mixed batch (y)');
  });
});
