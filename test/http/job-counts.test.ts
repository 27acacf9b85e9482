// A job's counts add up wherever the server shows a job (docs/api.md, "Polling"): `deleted` on every
// kind, and `total` counting every object the job copies, skips or deletes, so that a complete job has
// none pending and is 100 % done. A scheduled sync that copies two objects, skips one and deletes one
// is run through the engine's lifecycle (src/lifecycle/) as a worker runs it, then read back as
// the job resource, the schedule's job list, the schedule's runs, the event data and the report.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { jobData } from '../../src/api/events.js';
import * as jobs from '../../src/lifecycle/jobs.js';
import { keyHash, type PlannedObject, releaseCopies } from '../../src/lifecycle/object-planning.js';
import { settleMany } from '../../src/lifecycle/object-settlement.js';
import * as objects from '../../src/lifecycle/objects.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, secretFor, unique } from '../support/fixtures.js';

await eachDatabase('job counts', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database);
  });
  after(() => t?.close());

  async function ok(method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) {
    const res = await t.request({ method, url, ...(payload === undefined ? {} : { payload }) });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res;
  }

  const location = async () =>
    (
      await ok('POST', '/v1/locations', { provider: 's3', label: unique('counts'), secret: secretFor('s3') })
    ).json().id as string;

  test('a complete sync counts its copies, skips and deletions in total, and reads 100 % everywhere', async () => {
    const [a, b] = [await location(), await location()];
    const schedule = (
      await ok('POST', '/v1/schedules', {
        name: unique('mirror'),
        every: 'every day at 02:00',
        action: { sync: { from: `${a}:bkt/src/`, to: `${b}:bkt/dst/`, delete: true } },
      })
    ).json().id as string;
    const jobId = (await ok('POST', `/v1/schedules/${schedule}/run`)).json().job_id as string;

    // Planned as a sync with deletions plans: two copies held until planned, one object equal, one
    // deletion held until the copies settled; then run as a worker runs them.
    const { db, clock } = t.services;
    const q = db.kysely;
    await q.updateTable('jobs').set({ lease_owner: 'planner' }).where('id', '=', jobId).execute();
    const planned = (key: string, more: Partial<PlannedObject>) => ({
      key,
      keyHash: keyHash(key),
      size: 10,
      etag: null,
      ...more,
    });
    const deletion = JSON.stringify({ op: 'delete', target: { location_id: b, path: 'bkt/dst/gone.txt' } });
    assert.ok(
      await jobs.commitBatch(
        q,
        'planner',
        jobId,
        0,
        [
          planned('a.txt', { held: 'until-planned' }),
          planned('b.txt', { held: 'until-planned' }),
          planned('same.txt', { skipped: 'equal by size-modtime' }),
          planned('gone.txt', { work: deletion, held: 'until-copied' }),
        ],
        clock.now(),
      ),
    );
    await releaseCopies(q, jobId);
    await jobs.planningDone(q, 'planner', jobId, clock.now());
    const lease = () => ({ owner: 'worker', now: clock.now(), until: clock.now() + 30_000 });
    const copies = await objects.claim(q, db.dialect, lease(), jobId, 10);
    assert.deepEqual(copies.map((o) => o.key).sort(), ['a.txt', 'b.txt']);
    const done = (bytes: number, deleted = false) => ({ kind: 'done' as const, bytes, deleted });
    await settleMany(
      q,
      'worker',
      copies.map((object) => ({ object, settlement: done(10) })),
    );
    assert.equal(await jobs.finishIfDone(q, jobId, clock.now()), undefined, 'the deletion is released');
    const [removal, ...none] = await objects.claim(q, db.dialect, lease(), jobId, 10);
    assert.equal(removal?.key, 'gone.txt');
    assert.deepEqual(none, []);
    await settleMany(q, 'worker', [
      { object: removal as NonNullable<typeof removal>, settlement: done(0, true) },
    ]);
    assert.equal(await jobs.finishIfDone(q, jobId, clock.now()), 'complete');

    const counts = { total: 4, pending: 0, succeeded: 2, skipped: 1, failed: 0, deleted: 1, size_only: 0 };
    const job = (await ok('GET', `/v1/jobs/${jobId}`)).json();
    assert.equal(job.status, 'complete');
    assert.deepEqual(job.counts, counts);
    // size_only is no state of its own: those objects are also counted as succeeded.
    const { pending, total, size_only: _sizeOnly, ...finished } = job.counts as typeof counts;
    assert.equal(pending, 0);
    assert.equal(
      Object.values(finished).reduce((sum, n) => sum + n, 0),
      total,
      'succeeded + skipped + failed + deleted = total: 100 %',
    );
    const listed = (await ok('GET', `/v1/jobs?schedule_id=${schedule}`)).json().jobs;
    assert.deepEqual(
      listed.map((j: { job_id: string; counts: unknown }) => [j.job_id, j.counts]),
      [[jobId, counts]],
    );
    // The schedule's runs say where each run's job stands, with its counts.
    const runs = (await ok('GET', `/v1/schedules/${schedule}`)).json().runs;
    assert.equal(runs.length, 1);
    assert.deepEqual(
      { job_id: runs[0].job_id, job_status: runs[0].job_status, counts: runs[0].counts },
      { job_id: jobId, job_status: 'complete', counts },
    );
    // What the event stream and the webhooks send of it (src/api/events.ts).
    const row = await q.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
    assert.deepEqual(jobData(row).counts, counts);
    // The report has a line for each object the total counts.
    const report = (await ok('GET', `/v1/jobs/${jobId}/report`)).body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(report.map((l: { key: string; outcome: string }) => `${l.key} ${l.outcome}`).sort(), [
      'a.txt copied',
      'b.txt copied',
      'gone.txt deleted',
      'same.txt skipped',
    ]);
  });

  test('a bulk copy counts deleted too (0), so that done = total - pending needs no case per kind', async () => {
    const [a, b] = [await location(), await location()];
    const accepted = (await ok('POST', '/v1/copy', { from: `${a}:bkt/src/`, to: `${b}:bkt/dst/` })).json();
    const job = (await ok('GET', `/v1/jobs/${accepted.job_id}`)).json();
    assert.equal(job.kind, 'copy');
    assert.deepEqual(job.counts, {
      total: 0,
      pending: 0,
      succeeded: 0,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
  });
});
