// A restarted worker takes back at once what its predecessor in the data dir held (src/queue/
// predecessor.ts, the queue's README "A restarted process"), on both databases: the leases of the
// process that held its slot before end, and the worker's maintenance queues that work again with the
// clock standing still, long before the leases would have run out; the leases of a process that still
// holds its slot, and of any owner no slot names, are left alone. The slot's holder dying is stood in
// for by its release (the operating system drops the lock of a process that exits however it exits:
// test/engine/restart.test.ts shows that with SIGKILL and `ferry serve`).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startBackground } from '../../src/background.js';
import * as jobs from '../../src/lifecycle/jobs.js';
import { keyHash } from '../../src/lifecycle/object-planning.js';
import * as objects from '../../src/lifecycle/objects.js';
import { endLeasesOf } from '../../src/queue/leases.js';
import { takeWorkerSlot } from '../../src/queue/predecessor.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, secretFor, unique } from '../support/fixtures.js';
import { bareJob } from '../support/jobs.js';
import { waitUntil } from '../support/wait.js';

const LEASE_MS = 30_000;

test('a slot is held for its holder’s life: the next taker gets another, and after it the holder’s record', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-slot-'));
  try {
    const first = takeWorkerSlot(dir);
    assert.ok(first);
    assert.deepEqual([first.index, first.predecessors], [0, []]);
    first.record(['host:1:aaaa', 'host:1:bbbb']);
    const second = takeWorkerSlot(dir);
    assert.equal(second?.index, 1, 'slot 0 is held: the next one');
    assert.equal(takeWorkerSlot(dir, 2), undefined, 'every slot held: none');
    first.release();
    const successor = takeWorkerSlot(dir);
    assert.ok(successor);
    assert.deepEqual([successor.index, successor.predecessors], [0, ['host:1:aaaa', 'host:1:bbbb']]);
    successor.release();
    second?.release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

await eachDatabase('a restarted worker', (database) => {
  let t: TestApp;
  const clock = new ManualClock(Date.UTC(2026, 11, 3, 9));
  before(async () => {
    t = await startTestApp(database, { clock });
  });
  after(() => t?.close());

  test('takes back at once the work of its dead predecessor, and nothing of a live process', async () => {
    const { db } = t.services;
    const q = db.kysely;
    // A job of three objects, each claimed by another process, then canceled (so that what is taken
    // back waits as pending rather than running against stores that are not there).
    const { jobId } = await bareJob(db, clock, 'restart');
    await q.updateTable('jobs').set({ lease_owner: 'planner' }).where('id', '=', jobId).execute();
    const keys = ['dead.txt', 'alive.txt', 'stranger.txt'];
    const batch = keys.map((key) => ({ key, keyHash: keyHash(key), size: 1, etag: null }));
    assert.ok(await jobs.commitBatch(q, 'planner', jobId, 0, batch, clock.now()));
    await jobs.planningDone(q, 'planner', jobId, clock.now());
    const owners = {
      'dead.txt': 'host:101:dead',
      'alive.txt': 'host:102:alive',
      'stranger.txt': 'other:7:x',
    };
    for (const owner of Object.values(owners)) {
      const lease = { owner, now: clock.now(), until: clock.now() + LEASE_MS };
      assert.equal((await objects.claim(q, db.dialect, lease, jobId, 1)).length, 1);
    }
    assert.ok(await jobs.cancel(q, jobId, clock.now()));

    // The data dir's slots: the live process holds slot 0; the dead one held slot 1 and recorded its
    // owner there, and its lock is gone.
    const live = takeWorkerSlot(t.config.dataDir);
    assert.equal(live?.index, 0);
    live?.record([owners['alive.txt']]);
    const dead = takeWorkerSlot(t.config.dataDir);
    assert.equal(dead?.index, 1);
    dead?.record([owners['dead.txt']]);
    dead?.release();

    const row = (key: string) =>
      q
        .selectFrom('job_objects')
        .select(['status', 'lease_owner', 'lease_expires_at', 'crashes'])
        .where('job_id', '=', jobId)
        .where('key', '=', key)
        .executeTakeFirstOrThrow();
    const before = { alive: await row('alive.txt'), stranger: await row('stranger.txt') };
    const background = startBackground(t.services, { worker: { pollMs: 50 } });
    try {
      // The clock never moves: only the ended lease lets maintenance queue the object again.
      const taken = await waitUntil(
        async () => {
          const r = await row('dead.txt');
          return r.status === 'pending' ? r : undefined;
        },
        { what: "the dead predecessor's object to be queued again", detail: () => t.logs.text },
      );
      assert.deepEqual(
        { ...taken, crashes: Number(taken.crashes) },
        { status: 'pending', lease_owner: null, lease_expires_at: null, crashes: 1 },
        'taken back as a lease that ran out: its crash counted',
      );
      // Said once the ending of the leases has answered, which on PostgreSQL can come after the worker's
      // maintenance (its own connection) has already queued the object again (seen once under load).
      await waitUntil(
        () => t.logs.text.includes("took back at once the work of this data dir's previous process"),
        {
          what: 'the restart to say it took the work back',
          detail: () => t.logs.text,
        },
      );
      assert.deepEqual(await row('alive.txt'), before.alive, 'a live process keeps its lease');
      assert.deepEqual(await row('stranger.txt'), before.stranger, 'an owner no slot names keeps its lease');
    } finally {
      await background.stop(5000);
      live?.release();
    }
  });

  test('a schedule whose holder died before it was due is due at its next time, not at once and again', async () => {
    const location = async () => {
      const res = await t.request({
        method: 'POST',
        url: '/v1/locations',
        payload: { provider: 's3', label: unique('pred'), secret: secretFor('s3') },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const [a, b] = [await location(), await location()];
    const res = await t.request({
      method: 'POST',
      url: '/v1/schedules',
      payload: {
        name: unique('pred'),
        every: 'every day at 02:00',
        action: { copy: { from: `${a}:bkt/p/`, to: `${b}:bkt/q/` } },
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().id as string;
    const q = t.services.db.kysely;
    // Held by a manual run whose process died, its next time hours ahead.
    await q
      .updateTable('schedules')
      .set({ lease_owner: 'host:103:dead', lease_expires_at: clock.now() + 60_000 })
      .where('id', '=', id)
      .execute();
    const { next_run_at } = await q
      .selectFrom('schedules')
      .select('next_run_at')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.ok(Number(next_run_at) > clock.now());
    assert.equal(await endLeasesOf(q, ['host:103:dead']), 1);
    assert.equal(await t.services.scheduleRunner.nextDue(), Number(next_run_at));
  });
});
