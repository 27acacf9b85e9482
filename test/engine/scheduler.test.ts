// The scheduler (docs/api.md, "Schedules") on both databases with an injected clock: a due time runs
// once across two processes; a run while the previous job is unfinished is recorded skipped_overlap;
// runs missed while ferry was down run once; paused schedules never run; a deleted location makes the
// run fail with its reason while the schedule stays; and a daily run on the daylight-saving days of
// Europe/Paris and America/New_York fires once that day, at the time docs/api.md states.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Scheduler } from '../../src/domain/schedules/scheduler.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { type Call, createLocation, newWorkspace } from '../support/transfers.js';

const HOUR = 3_600_000;

await eachDatabase('scheduler', (database) => {
  const clock = new ManualClock(Date.parse('2027-01-10T10:15:00Z'));
  let t: TestApp;
  let other: TestApp;
  let s3: S3rverHandle;
  before(async () => {
    s3 = await startS3rver();
    const env = { FERRY_EGRESS_ALLOW: '127.0.0.1/32' };
    t = await startTestApp(database, { clock, env });
    // A second process on the same database.
    other = await startTestApp(database, { clock, env, shareWith: t });
  });
  after(async () => {
    await other.close();
    await t.close();
    await s3.close();
  });

  function scheduler(app: TestApp, queued = () => {}): Scheduler {
    return new Scheduler({
      db: app.services.db,
      clock,
      logger: app.services.logger,
      runner: app.services.scheduleRunner,
      owner: unique('scheduler'),
      queued,
    });
  }

  async function setup(
    every: string,
    timezone?: string,
  ): Promise<{ call: Call; id: string; a: string; b: string; next: number }> {
    const call = await newWorkspace(t);
    const secret = { access_key_id: 'AKIDSAME', secret_access_key: 'same-secret' };
    const a = await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } });
    const b = await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } });
    const res = await call({
      method: 'POST',
      url: '/v1/schedules',
      payload: {
        name: unique('s'),
        every,
        ...(timezone === undefined ? {} : { timezone }),
        action: { copy: { from: { id: a.id, path: 'src/in/' }, to: { id: b.id, path: 'dst/out/' } } },
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return { call, id: res.json().id, a: a.id, b: b.id, next: Date.parse(res.json().next_run_at) };
  }

  async function read(call: Call, id: string) {
    const res = await call({ method: 'GET', url: `/v1/schedules/${id}` });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  }

  async function jobsOf(id: string): Promise<number> {
    const rows = await t.services.db.kysely
      .selectFrom('jobs')
      .select('id')
      .where('schedule_id', '=', id)
      .execute();
    return rows.length;
  }

  test('a due time runs once across two processes claiming at the same moment', async () => {
    const { call, id, next } = await setup('every hour');
    clock.set(next);
    let woken = 0;
    const [one, two] = await Promise.all([
      scheduler(t, () => (woken += 1)).runDue(),
      scheduler(other, () => (woken += 1)).runDue(),
    ]);
    const mine = [...one, ...two].filter((r) => r.schedule_id === id);
    assert.equal(mine.length, 1, JSON.stringify([one, two]));
    assert.equal(mine[0]?.outcome, 'started');
    assert.ok(woken >= 1);
    assert.equal(await jobsOf(id), 1);
    const schedule = await read(call, id);
    assert.equal(schedule.runs.length, 1);
    assert.equal(schedule.runs[0].due_at, new Date(next).toISOString());
    assert.equal(schedule.last_job_id, mine[0]?.job_id);
    assert.equal(schedule.next_run_at, new Date(next + HOUR).toISOString());
    // Nothing more is due until then, for either process.
    assert.deepEqual(
      (await scheduler(t).runDue()).filter((r) => r.schedule_id === id),
      [],
    );
    assert.deepEqual(
      (await scheduler(other).runDue()).filter((r) => r.schedule_id === id),
      [],
    );
  });

  test('a due time another process recorded already (its lease ran out mid-run) is not run again', async () => {
    const { call, id, next } = await setup('every hour');
    clock.set(next);
    const runner = t.services.scheduleRunner;
    const [row] = (await runner.claimDue('frozen', 1000, 100)).filter((r) => r.id === id);
    assert.ok(row);
    const first = await runner.run(row, next, 'frozen', false);
    assert.equal(first?.outcome, 'started');
    // As if 'frozen' had recorded the run and stopped before freeing the schedule.
    await t.services.db.kysely
      .updateTable('schedules')
      .set({ next_run_at: next, lease_owner: 'frozen', lease_expires_at: next + 1000 })
      .where('id', '=', id)
      .execute();
    clock.set(next + 2000);
    const records = await scheduler(other).runDue();
    assert.equal(records.filter((r) => r.schedule_id === id).length, 0);
    assert.equal(await jobsOf(id), 1);
    const schedule = await read(call, id);
    assert.equal(schedule.runs.length, 1);
    assert.equal(schedule.next_run_at, new Date(next + HOUR).toISOString());
  });

  test('a run while the previous job is unfinished is recorded skipped_overlap; once it ends, the next run starts', async () => {
    const { call, id, next } = await setup('every hour');
    clock.set(next);
    const [first] = (await scheduler(t).runDue()).filter((r) => r.schedule_id === id);
    assert.equal(first?.outcome, 'started');
    clock.set(next + HOUR);
    const [second] = (await scheduler(t).runDue()).filter((r) => r.schedule_id === id);
    assert.equal(second?.outcome, 'skipped_overlap');
    assert.match(second?.reason ?? '', new RegExp(`job ${first?.job_id} of an earlier run has not finished`));
    assert.equal(await jobsOf(id), 1);
    const canceled = await call({ method: 'POST', url: `/v1/jobs/${first?.job_id}/cancel` });
    assert.equal(canceled.statusCode, 202, canceled.body);
    clock.set(next + 2 * HOUR);
    const [third] = (await scheduler(t).runDue()).filter((r) => r.schedule_id === id);
    assert.equal(third?.outcome, 'started');
    assert.notEqual(third?.job_id, first?.job_id);
    const runs = (await read(call, id)).runs.map((r: { outcome: string }) => r.outcome);
    assert.deepEqual(runs, ['started', 'skipped_overlap', 'started']);
  });

  test('runs missed while ferry was down run once when it is back, then the next time is computed from now', async () => {
    const { call, id, next } = await setup('every hour');
    clock.set(next + 5 * HOUR + 10 * 60_000);
    const records = (await scheduler(t).runDue()).filter((r) => r.schedule_id === id);
    const mine = await read(call, id);
    assert.equal(mine.runs.length, 1);
    assert.equal(mine.runs[0].due_at, new Date(next).toISOString());
    assert.deepEqual(
      records.map((r) => [r.due_at, r.outcome]),
      [[next, 'started']],
    );
    assert.equal(mine.next_run_at, new Date(next + 6 * HOUR).toISOString());
    assert.equal(await jobsOf(id), 1);
  });

  test('a paused schedule never runs, however late; resumed, it runs at the next time from now', async () => {
    const { call, id, next } = await setup('every hour');
    const paused = await call({ method: 'PATCH', url: `/v1/schedules/${id}`, payload: { paused: true } });
    assert.equal(paused.statusCode, 200, paused.body);
    clock.set(next + 3 * HOUR);
    await scheduler(t).runDue();
    assert.equal((await read(call, id)).runs.length, 0);
    const resumed = await call({ method: 'PATCH', url: `/v1/schedules/${id}`, payload: { paused: false } });
    assert.equal(resumed.json().next_run_at, new Date(next + 4 * HOUR).toISOString());
    await scheduler(t).runDue();
    assert.equal((await read(call, id)).runs.length, 0);
    clock.set(next + 4 * HOUR);
    await scheduler(t).runDue();
    assert.deepEqual(
      (await read(call, id)).runs.map((r: { outcome: string }) => r.outcome),
      ['started'],
    );
  });

  test('a deleted location makes the run fail, recorded with its reason; the schedule stays and runs on', async () => {
    const { call, id, a, next } = await setup('every hour');
    const deleted = await call({ method: 'DELETE', url: '/v1/locations', payload: { id: a } });
    assert.equal(deleted.statusCode, 204, deleted.body);
    clock.set(next);
    const [record] = (await scheduler(t).runDue()).filter((r) => r.schedule_id === id);
    assert.equal(record?.outcome, 'failed');
    const schedule = await read(call, id);
    assert.equal(schedule.runs[0].outcome, 'failed');
    assert.match(schedule.runs[0].reason, new RegExp(`${a}.*not found|not found.*${a}`));
    assert.equal(schedule.runs[0].job_id, undefined);
    assert.equal(schedule.next_run_at, new Date(next + HOUR).toISOString());
    assert.equal(await jobsOf(id), 0);
    // Run now answers with the refusal itself.
    clock.advance(1000);
    const now = await call({ method: 'POST', url: `/v1/schedules/${id}/run` });
    assert.equal(now.statusCode, 404, now.body);
  });

  async function firesOn(every: string, timezone: string, from: string, day: [string, string]) {
    clock.set(Date.parse(from));
    const { call, id } = await setup(every, timezone);
    const fired: number[] = [];
    // Every 15 minutes through the day, as a worker's polls would.
    for (let at = Date.parse(day[0]); at < Date.parse(day[1]); at += 15 * 60_000) {
      clock.set(at);
      for (const r of await scheduler(t).runDue())
        if ((await read(call, id)).runs.length > fired.length) fired.push(r.due_at);
    }
    return { fired: fired.map((ms) => new Date(ms).toISOString()), schedule: await read(call, id) };
  }

  test('Europe/Paris spring forward (2027-03-28): a daily 02:30 fires once, at 03:30 CEST (01:30Z)', async () => {
    const { fired, schedule } = await firesOn('every day at 02:30', 'Europe/Paris', '2027-03-27T12:00:00Z', [
      '2027-03-27T23:00:00Z',
      '2027-03-28T22:00:00Z',
    ]);
    assert.deepEqual(fired, ['2027-03-28T01:30:00.000Z']);
    assert.equal(schedule.next_run_at, '2027-03-29T00:30:00.000Z');
  });

  test('America/New_York fall back (2027-11-07): a daily 01:30 fires once, at 01:30 EDT (05:30Z)', async () => {
    const { fired, schedule } = await firesOn(
      'every day at 01:30',
      'America/New_York',
      '2027-11-06T12:00:00Z',
      ['2027-11-07T04:00:00Z', '2027-11-08T05:00:00Z'],
    );
    assert.deepEqual(fired, ['2027-11-07T05:30:00.000Z']);
    assert.equal(schedule.next_run_at, '2027-11-08T06:30:00.000Z');
  });

  test('America/New_York spring forward (2027-03-14): a daily 02:30 fires once, at 03:30 EDT (07:30Z)', async () => {
    const { fired } = await firesOn('30 2 * * *', 'America/New_York', '2027-03-13T12:00:00Z', [
      '2027-03-14T05:00:00Z',
      '2027-03-15T04:00:00Z',
    ]);
    assert.deepEqual(fired, ['2027-03-14T07:30:00.000Z']);
  });

  test('Europe/Paris fall back (2027-10-31): a daily 01:30 fires once, at 01:30 CEST (23:30Z the day before)', async () => {
    const { fired } = await firesOn('every day at 01:30', 'Europe/Paris', '2027-10-30T12:00:00Z', [
      '2027-10-30T22:00:00Z',
      '2027-10-31T23:00:00Z',
    ]);
    assert.deepEqual(fired, ['2027-10-30T23:30:00.000Z']);
  });
});
