// docs/api.md "Rate limits and caps", the schedules bucket, through inject() on both databases:
// creating, changing and deleting schedules take places in a bucket of their own
// (FERRY_RATE_SCHEDULES_PER_MINUTE), whose 429 names schedule changes; they take nothing from the
// moves, removes and pulls (transfer), nor those from them. Small limits by settings; time by a
// manual clock. Nothing here reaches a store: the location's endpoint is never called.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { loadConfig } from '../../src/config.js';
import { idleWorkspace, ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';

const LIMIT = 2;

await eachDatabase('the schedules rate limit', (database) => {
  const clock = new ManualClock(Date.parse('2026-12-01T10:00:00Z'));
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database, {
      clock,
      env: {
        FERRY_RATE_SCHEDULES_PER_MINUTE: String(LIMIT),
        FERRY_RATE_TRANSFER_PER_MINUTE: String(LIMIT),
      },
    });
  });
  after(() => t.close());

  async function world() {
    const { key, label } = await idleWorkspace(t);
    const call = (options: InjectOptions) => t.request({ ...options, token: key.token });
    const create = () =>
      call({
        method: 'POST',
        url: '/v1/schedules',
        payload: {
          name: unique('s'),
          every: 'every day at 02:00',
          action: { copy: { from: `${label}:bucket/in/`, to: `${label}:bucket/out/` } },
        },
      });
    const remove = () =>
      call({ method: 'POST', url: '/remove', payload: { path: `${label}/bucket/${unique('f')}.txt` } });
    return { call, create, remove };
  }

  test('schedule changes have a bucket of their own, named in its 429; removes do not use it up, nor it theirs', async () => {
    const w = await world();
    const first = await w.create();
    assert.equal(first.statusCode, 201, first.body);
    const id = first.json().id as string;
    // A change takes a place in the same bucket.
    const paused = await w.call({ method: 'PATCH', url: `/v1/schedules/${id}`, payload: { paused: true } });
    assert.equal(paused.statusCode, 200, paused.body);
    const limited = await w.create();
    assert.equal(limited.statusCode, 429, limited.body);
    assert.equal(
      limited.json().message,
      `at most ${LIMIT} schedule changes per minute in a workspace; retry in 60 s`,
    );
    assert.equal(limited.headers['retry-after'], '60');
    const deleted = await w.call({ method: 'DELETE', url: `/v1/schedules/${id}` });
    assert.equal(deleted.statusCode, 429, 'a delete is a change too');
    // The moves, removes and pulls keep all their places.
    for (let i = 0; i < LIMIT; i++) {
      const res = await w.remove();
      assert.equal(res.statusCode, 202, `remove ${i}: ${res.body}`);
    }
    const removes = await w.remove();
    assert.equal(removes.statusCode, 429, removes.body);
    assert.match(removes.json().message, /moves, removes and pulls/);
    // A minute on, removes use up their bucket first: schedule changes still have all of theirs.
    clock.advance(60_001);
    for (let i = 0; i < LIMIT; i++) assert.equal((await w.remove()).statusCode, 202, `remove ${i}`);
    assert.equal((await w.remove()).statusCode, 429);
    const created = await w.create();
    assert.equal(created.statusCode, 201, created.body);
  });
});

test('FERRY_RATE_SCHEDULES_PER_MINUTE sets the bucket (60 by default); a bad value is refused at start', () => {
  assert.equal(loadConfig({}).rateLimits.perMinute.schedules, 60);
  assert.equal(loadConfig({ FERRY_RATE_SCHEDULES_PER_MINUTE: '7' }).rateLimits.perMinute.schedules, 7);
  assert.throws(
    () => loadConfig({ FERRY_RATE_SCHEDULES_PER_MINUTE: '0' }),
    /FERRY_RATE_SCHEDULES_PER_MINUTE/,
  );
});
