// src/queue/leases.ts, through the transfers lifecycle that passes it its table and moves, on both
// databases: renewal touches only the owner's held leases; a lease that ran out is reclaimed before
// the last crash allowed and given up at it, whichever runs first; a hand-back uncounts the attempt.
// Rows are read back one by one (other tests' rows share the table); time is a ManualClock.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Db } from '../../src/db/database.js';
import type { TransferRow } from '../../src/db/schema.js';
import * as transfers from '../../src/engine/lifecycle/transfers.js';
import type { CrashPolicy } from '../../src/queue/backoff.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';

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

  test('renewal extends the leases the owner holds, and no other', async () => {
    const mine = await claimed('renewing');
    const theirs = await claimed('other');
    const until = clock.now() + 5 * LEASE_MS;
    await transfers.renew(db.kysely, 'renewing', until);
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
    assert.ok((await transfers.reclaim(db.kysely, now, policy)) >= 1);
    const reclaimed = await row(once);
    assert.equal(reclaimed.status, 'queued');
    assert.equal(reclaimed.lease_owner, null);
    assert.equal(reclaimed.lease_expires_at, null);
    assert.equal(Number(reclaimed.updated_at), now);
    assert.equal((await row(last)).status, 'running');
    assert.equal((await row(live)).status, 'running');

    assert.ok((await transfers.giveUp(db.kysely, now, policy)) >= 1);
    const given = await row(last);
    assert.equal(given.status, 'failed');
    assert.equal(
      given.error,
      'the worker crashed 2 times on this work: its process stopped while running it (the lease ran out)',
    );
    assert.equal(given.lease_owner, null);
    assert.equal(Number(given.finished_at), now);
    assert.equal(Number(given.updated_at), now);
    assert.equal((await row(once)).status, 'queued', 'giveUp leaves the reclaimed row alone');
    const still = await row(live);
    assert.equal(still.status, 'running');
    assert.equal(still.lease_owner, 'alive');
  });

  test('a hand-back queues the owner’s rows again with the attempt and the crash uncounted', async () => {
    const mine = await claimed('stopping');
    const theirs = await claimed('staying');
    clock.advance(1000);
    await transfers.handBack(db.kysely, 'stopping', clock.now());
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
});
