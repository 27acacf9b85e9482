// src/queue/leases.ts, the one routine by which every leased table (src/queue/leased.ts) takes, renews,
// takes back and hands back its leases, on both databases: every declaration names columns its table
// has; renewal touches only the owner's held leases; a lease that ran out is reclaimed before the last
// crash allowed and given up at it, whichever runs first; a hand-back uncounts the attempt; the
// worker's housekeeping (one list, WORKER_LEASES) takes back only the tables whose declaration says
// housekeeping does, and a job's planning lease is left to its claim, which also honours a hold-off.
// Rows are read back one by one (other tests' rows share the table); time is a ManualClock.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import type { TransferRow } from '../../src/db/schema.js';
import * as jobs from '../../src/lifecycle/jobs.js';
import * as transfers from '../../src/lifecycle/transfers.js';
import { WORKER_LEASES } from '../../src/lifecycle/worker-leases.js';
import { type CrashPolicy, DEFAULT_CRASH_POLICY } from '../../src/queue/backoff.js';
import { JOBS, LEASED, TRANSFERS } from '../../src/queue/leased.js';
import {
  giveUp,
  handBackLeases,
  type Kept,
  reclaimExpired,
  renewLeases,
  takeBack,
} from '../../src/queue/leases.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';
import { bareJob } from '../support/jobs.js';

const LEASE_MS = 30_000;

await eachDatabase('leases', (database) => {
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

  /** A queued transfer, claimed by `owner` (running, attempts 1, crashes 1). */
  async function claimed(owner: string): Promise<string> {
    const { id } = await transfers.enqueue(
      db.kysely,
      workspaceId,
      { kind: 'remove', paths: [{ location_id: 'loc', path: `bucket/${owner}` }] },
      clock.now(),
    );
    const now = clock.now();
    const rows = await transfers.claim(
      db.kysely,
      db.dialect,
      { owner, now, until: now + LEASE_MS },
      workspaceId,
      10,
    );
    assert.ok(
      rows.some((r) => r.id === id),
      'the new transfer was claimed',
    );
    return id;
  }

  const row = (id: string): Promise<TransferRow> =>
    db.kysely.selectFrom('transfers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('every leased table has the columns its declaration names', async () => {
    for (const leased of LEASED) {
      const columns = [
        ...leased.keys,
        leased.owner,
        leased.until,
        ...(leased.attempts === undefined ? [] : [leased.attempts]),
        ...(leased.crashes === undefined ? [] : ['crashes']),
        ...(leased.held === undefined ? [] : ['status']),
        ...(leased.touched ?? []),
        ...(leased.ended ?? []),
      ];
      await sql`select ${sql.join(columns.map((c) => sql.ref(c)))} from ${sql.table(leased.table)} where 1 = 0`.execute(
        db.kysely,
      );
    }
    assert.deepEqual(
      new Set(LEASED.map((l) => l.table)),
      new Set([
        'transfers',
        'job_objects',
        'jobs',
        'sends',
        'webhook_messages',
        'schedules',
        'periodic_tasks',
        'locations',
      ]),
    );
  });

  test('renewal extends the leases the owner holds, and no other', async () => {
    const mine = await claimed('renewing');
    const theirs = await claimed('other');
    const until = clock.now() + 5 * LEASE_MS;
    await renewLeases(db.kysely, TRANSFERS, 'renewing', until);
    assert.equal(Number((await row(mine)).lease_expires_at), until);
    assert.equal(Number((await row(theirs)).lease_expires_at), clock.now() + LEASE_MS);
  });

  test('a lease that ran out is reclaimed before the last crash allowed and given up at it; a live lease stays', async () => {
    const policy: CrashPolicy = { max: 2 };
    const once = await claimed('dead');
    const last = await claimed('dead');
    await db.kysely.updateTable('transfers').set({ crashes: 2 }).where('id', '=', last).execute();
    clock.advance(LEASE_MS + 1);
    const live = await claimed('alive');
    const now = clock.now();
    // Reclaim first: it must leave the row on its last crash to giveUp.
    assert.ok((await reclaimExpired(db.kysely, TRANSFERS, now, policy)) >= 1);
    const reclaimed = await row(once);
    assert.equal(reclaimed.status, 'queued');
    assert.equal(reclaimed.lease_owner, null);
    assert.equal(reclaimed.lease_expires_at, null);
    assert.equal(Number(reclaimed.updated_at), now);
    assert.equal((await row(last)).status, 'running');
    assert.equal((await row(live)).status, 'running');

    // The table's lifecycle is handed the rows given up, inside the give-up's transaction and after it.
    const within: string[] = [];
    const afterwards: string[] = [];
    const kept: Kept<TransferRow> = {
      leased: TRANSFERS,
      async givenUp(trx, rows) {
        const seen = await trx
          .selectFrom('transfers')
          .select('status')
          .where('id', '=', last)
          .executeTakeFirst();
        within.push(...rows.map((r) => `${r.id}:${seen?.status}`));
      },
      async afterGivenUp(_q, rows) {
        afterwards.push(...rows.map((r) => r.id));
      },
    };
    const given = await giveUp(db.kysely, kept, now, policy);
    assert.ok(given.some((r) => r.id === last));
    assert.ok(within.includes(`${last}:failed`));
    assert.ok(afterwards.includes(last));
    const failed = await row(last);
    assert.equal(failed.status, 'failed');
    assert.equal(
      failed.error,
      'the worker crashed 2 times on this work: its process stopped while running it (the lease ran out)',
    );
    assert.equal(failed.lease_owner, null);
    assert.equal(Number(failed.finished_at), now);
    assert.equal(Number(failed.updated_at), now);
    assert.equal((await row(once)).status, 'queued', 'giveUp leaves the reclaimed row alone');
    const still = await row(live);
    assert.equal(still.status, 'running');
    assert.equal(still.lease_owner, 'alive');
  });

  test('a hand-back queues the owner’s rows again with the attempt and the crash uncounted', async () => {
    const mine = await claimed('stopping');
    const theirs = await claimed('staying');
    clock.advance(1000);
    await handBackLeases(db.kysely, TRANSFERS, 'stopping', clock.now());
    const back = await row(mine);
    assert.equal(back.status, 'queued');
    assert.equal(back.lease_owner, null);
    assert.equal(back.attempts, 0);
    assert.equal(back.crashes, 0);
    assert.equal(Number(back.updated_at), clock.now());
    const kept = await row(theirs);
    assert.equal(kept.status, 'running');
    assert.equal(kept.attempts, 1);
  });

  test("housekeeping takes back a transfer whose lease ran out and leaves a job's planning lease to its claim, which honours a hold-off", async () => {
    const { jobId } = await bareJob(db, clock, 'leases');
    const job = () =>
      db.kysely.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
    const lease = (owner: string) => ({ owner, now: clock.now(), until: clock.now() + LEASE_MS });
    assert.equal((await jobs.claimPlanning(db.kysely, db.dialect, lease('planner-dead')))?.id, jobId);
    const transfer = await claimed('worker-dead');
    clock.advance(LEASE_MS + 1);

    const { reclaimed } = await takeBack(db.kysely, WORKER_LEASES, clock.now(), DEFAULT_CRASH_POLICY);
    assert.ok(reclaimed >= 1);
    assert.equal((await row(transfer)).status, 'queued');
    const planning = await job();
    assert.equal(planning.lease_owner, 'planner-dead', 'a planning lease is not taken back by housekeeping');
    assert.equal(planning.planning_attempts, 1);

    // Its claim takes it, counting the attempt; a hold-off (no holder, an end ahead) keeps it from
    // every claim until the end has passed.
    const taken = await jobs.claimPlanning(db.kysely, db.dialect, lease('planner-next'));
    assert.equal(taken?.id, jobId);
    assert.equal(taken?.planning_attempts, 2);
    await jobs.planningBackoff(db.kysely, 'planner-next', jobId, 'slow', clock.now() + 10_000, clock.now());
    const held = await job();
    assert.equal(held.lease_owner, null);
    assert.equal(Number(held.lease_expires_at), clock.now() + 10_000);
    assert.equal(await jobs.claimPlanning(db.kysely, db.dialect, lease('planner-early')), undefined);
    clock.advance(10_001);
    assert.equal((await jobs.claimPlanning(db.kysely, db.dialect, lease('planner-late')))?.id, jobId);
    await handBackLeases(db.kysely, JOBS, 'planner-late');
    const back = await job();
    assert.equal(back.lease_owner, null);
    assert.equal(back.planning_attempts, 2, 'the handed-back attempt is not counted');
  });
});
