// An idle worker sleeps until the next work waiting out a backoff is due, instead of polling: the
// lifecycle modules tell it when that is. Parked objects (a canceled job's) are never due, and what
// is due already is for the claim, not for the wait.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Db } from '../../src/db/database.js';
import * as jobs from '../../src/lifecycle/jobs.js';
import { keyHash, plan } from '../../src/lifecycle/object-planning.js';
import { nextDue } from '../../src/lifecycle/object-reads.js';
import * as transfers from '../../src/lifecycle/transfers.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';
import { bareJob } from '../support/jobs.js';

await eachDatabase('when work is next due', (database) => {
  let t: TestApp;
  let db: Db;
  const clock = new ManualClock(Date.UTC(2026, 10, 24, 9));

  before(async () => {
    t = await startTestApp(database, { clock });
    db = t.services.db;
  });
  after(() => t?.close());

  test('nothing waiting: no wake-up is asked for', async () => {
    const now = clock.now();
    assert.equal(await nextDue(db.kysely, now), undefined);
    assert.equal(await transfers.nextDue(db.kysely, now), undefined);
    assert.equal(await jobs.nextPlanningDue(db.kysely, now), undefined);
  });

  test('the earliest backoff of each kind, ignoring what is due already and parked objects', async () => {
    const now = clock.now();
    const { jobId, workspaceId } = await bareJob(db, clock, 'due');
    const job = { job_id: jobId };
    await plan(
      db.kysely,
      job.job_id,
      0,
      ['a', 'b', 'c', 'd'].map((key) => ({ key, keyHash: keyHash(key), size: 1, etag: null })),
    );
    const runAfter = { a: now - 1000, b: now + 7000, c: now + 3000 };
    for (const [key, at] of Object.entries(runAfter)) {
      await db.kysely.updateTable('job_objects').set({ run_after: at }).where('key', '=', key).execute();
    }
    // d is parked (its job canceled): never due.
    await db.kysely
      .updateTable('job_objects')
      .set({ run_after: Number.MAX_SAFE_INTEGER })
      .where('key', '=', 'd')
      .execute();
    assert.equal(await nextDue(db.kysely, now), now + 3000);

    const queued = await transfers.enqueue(db.kysely, workspaceId, { kind: 'remove', paths: [] }, now);
    assert.equal(await transfers.nextDue(db.kysely, now), undefined, 'queued and due now');
    await db.kysely
      .updateTable('transfers')
      .set({ run_after: now + 4000 })
      .where('id', '=', queued.id)
      .execute();
    assert.equal(await transfers.nextDue(db.kysely, now), now + 4000);

    // A planning backoff: no owner, and a lease end in the future.
    await db.kysely
      .updateTable('jobs')
      .set({ lease_owner: null, lease_expires_at: now + 9000 })
      .where('id', '=', job.job_id)
      .execute();
    assert.equal(await jobs.nextPlanningDue(db.kysely, now), now + 9000);
    // Held by a planner: its lease end is not a backoff.
    await db.kysely
      .updateTable('jobs')
      .set({ lease_owner: 'planner' })
      .where('id', '=', job.job_id)
      .execute();
    assert.equal(await jobs.nextPlanningDue(db.kysely, now), undefined);
  });
});
