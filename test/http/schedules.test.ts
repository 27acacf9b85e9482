// docs/api.md "Schedules" through HTTP on both databases: create, list, read, change, pause and resume,
// delete, run now, and every 400, with real s3rver locations behind the copy actions and an injected
// clock (no worker: the jobs a run starts stay planning, which is what the overlap rule needs).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { type Call, createLocation, newWorkspace } from '../support/transfers.js';

const HOUR = 3_600_000;

await eachDatabase('schedules (HTTP)', (database) => {
  const clock = new ManualClock(Date.parse('2027-01-10T10:15:00Z'));
  let t: TestApp;
  let s3: S3rverHandle;
  before(async () => {
    s3 = await startS3rver();
    t = await startTestApp(database, { clock, env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' } });
  });
  after(async () => {
    await t.close();
    await s3.close();
  });

  async function setup(): Promise<{ call: Call; a: string; b: string; labelA: string }> {
    const call = await newWorkspace(t);
    const secret = { access_key_id: 'AKIDSAME', secret_access_key: 'same-secret' };
    const a = await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } });
    const b = await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } });
    return { call, a: a.id, b: b.id, labelA: a.label };
  }

  const copyAction = (a: string, b: string) => ({
    copy: { from: { id: a, path: 'src/in/' }, to: { id: b, path: 'dst/out/' } },
  });

  async function create(call: Call, payload: Record<string, unknown>) {
    return call({ method: 'POST', url: '/v1/schedules', payload });
  }

  test('create answers 201 with the schedule and its next run; list and read show it; delete makes it 404', async () => {
    const { call, a, b } = await setup();
    const res = await create(call, {
      name: 'nightly',
      every: 'every day at 02:00',
      action: copyAction(a, b),
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    assert.match(created.id, /^[0-9a-f-]{36}$/);
    assert.equal(created.name, 'nightly');
    assert.equal(created.every, 'every day at 02:00');
    assert.equal(created.cron, '0 2 * * *');
    assert.equal(created.timezone, 'UTC');
    assert.equal(created.paused, false);
    assert.deepEqual(created.action, copyAction(a, b));
    assert.equal(created.next_run_at, '2027-01-11T02:00:00.000Z');
    assert.equal(created.last_run_at, undefined);
    assert.equal(created.last_job_id, undefined);

    const list = await call({ method: 'GET', url: '/v1/schedules' });
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(
      list.json().schedules.map((s: { id: string }) => s.id),
      [created.id],
    );
    const read = await call({ method: 'GET', url: `/v1/schedules/${created.id}` });
    assert.equal(read.statusCode, 200, read.body);
    assert.deepEqual(read.json(), { ...created, runs: [] });

    const gone = await call({ method: 'DELETE', url: `/v1/schedules/${created.id}` });
    assert.equal(gone.statusCode, 204, gone.body);
    assert.equal((await call({ method: 'GET', url: `/v1/schedules/${created.id}` })).statusCode, 404);
    assert.equal((await call({ method: 'DELETE', url: `/v1/schedules/${created.id}` })).statusCode, 404);
  });

  test('the list is paged newest first, and another workspace sees none of it', async () => {
    const { call, a, b } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      clock.advance(1000);
      const res = await create(call, { name: `s${i}`, every: '0 * * * *', action: copyAction(a, b) });
      assert.equal(res.statusCode, 201, res.body);
      ids.unshift(res.json().id);
    }
    const first = (await call({ method: 'GET', url: '/v1/schedules?limit=2' })).json();
    assert.deepEqual(
      first.schedules.map((s: { id: string }) => s.id),
      ids.slice(0, 2),
    );
    const second = (
      await call({ method: 'GET', url: `/v1/schedules?limit=2&cursor=${first.next_cursor}` })
    ).json();
    assert.deepEqual(
      second.schedules.map((s: { id: string }) => s.id),
      ids.slice(2),
    );
    assert.equal(second.next_cursor, undefined);
    const other = await newWorkspace(t);
    assert.deepEqual((await other({ method: 'GET', url: '/v1/schedules' })).json().schedules, []);
    assert.equal((await other({ method: 'GET', url: `/v1/schedules/${ids[0]}` })).statusCode, 404);
    assert.equal((await other({ method: 'POST', url: `/v1/schedules/${ids[0]}/run` })).statusCode, 404);
  });

  test('timezone: the next run is read in the zone; PATCH of every or timezone computes it again from now', async () => {
    const { call, a, b } = await setup();
    const res = await create(call, {
      name: 'paris',
      every: 'every monday at 9am',
      timezone: 'Europe/Paris',
      action: copyAction(a, b),
    });
    assert.equal(res.statusCode, 201, res.body);
    const { id } = res.json();
    // 2027-01-10 is a Sunday; Monday 09:00 in Paris (CET) is 08:00Z.
    assert.equal(res.json().next_run_at, '2027-01-11T08:00:00.000Z');
    const moved = await call({
      method: 'PATCH',
      url: `/v1/schedules/${id}`,
      payload: { timezone: 'America/New_York', name: 'ny' },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(moved.json().name, 'ny');
    assert.equal(moved.json().next_run_at, '2027-01-11T14:00:00.000Z');
    const every = await call({
      method: 'PATCH',
      url: `/v1/schedules/${id}`,
      payload: { every: '30 18 * * 1-5' },
    });
    assert.equal(every.statusCode, 200, every.body);
    assert.equal(every.json().cron, '30 18 * * 1-5');
    assert.equal(every.json().next_run_at, '2027-01-11T23:30:00.000Z');
  });

  test('a paused schedule has no next run; resuming computes it from now', async () => {
    const { call, a, b } = await setup();
    const res = await create(call, {
      name: 'p',
      every: 'every hour',
      action: copyAction(a, b),
      paused: true,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().paused, true);
    assert.equal(res.json().next_run_at, undefined);
    const { id } = res.json();
    clock.advance(5 * HOUR);
    const resumed = await call({ method: 'PATCH', url: `/v1/schedules/${id}`, payload: { paused: false } });
    assert.equal(resumed.statusCode, 200, resumed.body);
    assert.equal(resumed.json().paused, false);
    const now = clock.now();
    assert.equal(Date.parse(resumed.json().next_run_at), Math.floor(now / HOUR) * HOUR + HOUR);
    const paused = await call({ method: 'PATCH', url: `/v1/schedules/${id}`, payload: { paused: true } });
    assert.equal(paused.json().next_run_at, undefined);
  });

  test('run now answers 202 with a job that carries schedule_id; a second run while it is unfinished is 409 and recorded skipped', async () => {
    const { call, a, b } = await setup();
    const { id } = (await create(call, { name: 'now', every: 'every day', action: copyAction(a, b) })).json();
    const run = await call({ method: 'POST', url: `/v1/schedules/${id}/run` });
    assert.equal(run.statusCode, 202, run.body);
    const { job_id, status } = run.json();
    assert.equal(status, 'planning');
    const job = (await call({ method: 'GET', url: `/v1/jobs/${job_id}` })).json();
    assert.equal(job.schedule_id, id);
    const listed = (await call({ method: 'GET', url: `/v1/jobs?schedule_id=${id}` })).json();
    assert.deepEqual(
      listed.jobs.map((j: { job_id: string }) => j.job_id),
      [job_id],
    );
    const unrelated = (
      await call({ method: 'GET', url: `/v1/jobs?schedule_id=${crypto.randomUUID()}` })
    ).json();
    assert.deepEqual(unrelated.jobs, []);

    clock.advance(1000);
    const again = await call({ method: 'POST', url: `/v1/schedules/${id}/run` });
    assert.equal(again.statusCode, 409, again.body);
    assert.match(again.json().message, new RegExp(`job ${job_id} of an earlier run has not finished`));

    const read = (await call({ method: 'GET', url: `/v1/schedules/${id}` })).json();
    assert.equal(read.last_job_id, job_id);
    assert.deepEqual(
      read.runs.map((r: { outcome: string; job_id?: string }) => [r.outcome, r.job_id]),
      [
        ['skipped_overlap', undefined],
        ['started', job_id],
      ],
    );
    // The next run keeps its time: a run now is not the day's run.
    assert.equal(read.next_run_at, '2027-01-11T00:00:00.000Z');
  });

  test('a sync action runs as a sync job carrying schedule_id and its options', async () => {
    const { call, a, b } = await setup();
    const action = { sync: { from: `${a}:src/`, to: `${b}:mirror/`, delete: true, max_delete: 10 } };
    const res = await create(call, { name: 'mirror', every: 'every day at 03:00', action });
    assert.equal(res.statusCode, 201, res.body);
    const { id } = res.json();
    const run = await call({ method: 'POST', url: `/v1/schedules/${id}/run` });
    assert.equal(run.statusCode, 202, run.body);
    const job = (await call({ method: 'GET', url: `/v1/jobs/${run.json().job_id}` })).json();
    assert.equal(job.kind, 'sync');
    assert.equal(job.schedule_id, id);
    assert.equal(job.delete, true);
    assert.equal(job.max_delete, 10);
  });

  test('every 400 names the field or the part not understood', async () => {
    const { call, a, b, labelA } = await setup();
    const action = copyAction(a, b);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ every: 'every day', action }, /name/],
      [{ name: 'x', action }, /every/],
      [{ name: 'x', every: 'every day' }, /action/],
      [{ name: 'x', every: 'every fortnight', action }, /every: "fortnight" is not understood/],
      [{ name: 'x', every: 'every day at 25:00', action }, /"25:00" is not understood/],
      [{ name: 'x', every: 'every minute', action }, /at most every 5 minutes/],
      [{ name: 'x', every: '*/2 * * * *', action }, /more often than every 5 minutes/],
      [{ name: 'x', every: '0 0 30 2 *', action }, /never run/],
      [{ name: 'x', every: '0 2 * *', action }, /five fields/],
      [{ name: 'x', every: `every day${' '.repeat(200)}`, action }, /every must NOT have more than 100/],
      [
        { name: 'x', every: 'every day', timezone: 'Mars/Olympus', action },
        /timezone must be an IANA time zone/,
      ],
      [{ name: 'x', every: 'every day', action: {} }, /action/],
      [{ name: 'x', every: 'every day', action: { move: {} } }, /action/],
      [{ name: 'x', every: 'every day', action: { ...action, sync: {} } }, /action/],
      [
        {
          name: 'x',
          every: 'every day',
          action: { copy: { from: `${labelA}:src/a.txt`, to: `${labelA}:dst/a.txt` } },
        },
        /action.copy must copy a prefix/,
      ],
      [
        {
          name: 'x',
          every: 'every day',
          action: { copy: { from: { id: a, path: 'src/' }, to: { id: a, path: 'src/in/' } } },
        },
        /must not lie inside the source prefix/,
      ],
      [
        {
          name: 'x',
          every: 'every day',
          action: { sync: { from: `${labelA}:src/`, to: `${labelA}:dst/`, max_delete: 5 } },
        },
        /max_delete applies only with delete: true/,
      ],
      [{ name: 'x', every: 'every day', action, color: 'red' }, /color|additional/],
      [{ name: '', every: 'every day', action }, /name/],
    ];
    for (const [payload, message] of cases) {
      const res = await create(call, payload);
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
      assert.match(res.json().message, message, JSON.stringify(payload));
    }
    const missing = await create(call, {
      name: 'x',
      every: 'every day',
      action: { copy: { from: 'no-such-location:src/', to: `${labelA}:dst/` } },
    });
    assert.equal(missing.statusCode, 404, missing.body);

    const { id } = (await create(call, { name: 'ok', every: 'every day', action })).json();
    const patches: Array<[Record<string, unknown>, RegExp]> = [
      [{}, /fewer than 1|minProperties|at least/i],
      [{ every: 'every blue moon' }, /"blue" is not understood/],
      [{ timezone: 'Nowhere/Else' }, /timezone/],
      [{ action: { sync: {} } }, /from|required/],
      [{ paused: 'yes' }, /paused/],
    ];
    for (const [payload, message] of patches) {
      const res = await call({ method: 'PATCH', url: `/v1/schedules/${id}`, payload });
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
      assert.match(res.json().message, message, JSON.stringify(payload));
    }
    // Nothing a refused PATCH said was kept.
    const kept = (await call({ method: 'GET', url: `/v1/schedules/${id}` })).json();
    assert.equal(kept.every, 'every day');
    assert.equal(kept.timezone, 'UTC');
    assert.equal((await call({ method: 'GET', url: '/v1/schedules?limit=0' })).statusCode, 400);
    assert.equal((await call({ method: 'GET', url: '/v1/schedules/not-a-uuid' })).statusCode, 404);
    assert.equal((await call({ method: 'GET', url: '/v1/jobs?schedule_id=nope' })).statusCode, 400);
  });

  test(`a workspace holds at most FERRY_MAX_SCHEDULES schedules (409 past it) [${unique('cap')}]`, async () => {
    const capped = await startTestApp(database, {
      clock,
      shareWith: t,
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_MAX_SCHEDULES: '2' },
    });
    try {
      const call: Call = async (options) => {
        const key = await keyFor();
        return capped.request({ ...options, token: key });
      };
      let token: string | undefined;
      async function keyFor(): Promise<string> {
        if (token !== undefined) return token;
        const { ensureWorkspace } = await import('../../src/domain/workspaces.js');
        const ws = await ensureWorkspace(capped.services.db.kysely, unique('ws'), clock);
        token = (await capped.services.apiKeys.create(ws.id, { name: 'cap' })).token;
        return token;
      }
      const secret = { access_key_id: 'AKIDSAME', secret_access_key: 'same-secret' };
      const a = await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } });
      const b = await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } });
      for (let i = 0; i < 2; i += 1) {
        const ok = await create(call, { name: `c${i}`, every: 'every day', action: copyAction(a.id, b.id) });
        assert.equal(ok.statusCode, 201, ok.body);
      }
      const refused = await create(call, { name: 'c3', every: 'every day', action: copyAction(a.id, b.id) });
      assert.equal(refused.statusCode, 409, refused.body);
      assert.match(refused.json().message, /at most 2 schedules \(FERRY_MAX_SCHEDULES\)/);
    } finally {
      await capped.close();
    }
  });
});
