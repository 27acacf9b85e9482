// src/queue/loop.ts: the loop the transfer worker, the send dispatcher, the webhook deliverer and the
// refresher run in. Real timers, short intervals.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../../src/log.js';
import { type RoundContext, WakeLoop } from '../../src/queue/loop.js';

/** Every loop a test starts, stopped after it whatever the test's outcome: a loop left running keeps the file's process alive. */
const started: WakeLoop[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((loop) => loop.stop()));
});

function recordingLogger(errors: unknown[]): Logger {
  return {
    error: (fields: unknown, message: string) => errors.push({ fields, message }),
  } as unknown as Logger;
}

/** A loop whose rounds are recorded; `answer` says what each round returns. */
function loopOf(options: {
  pollMs: number;
  answer?: (n: number) => number | undefined;
  roundMs?: number;
  fail?: (n: number) => boolean;
}) {
  const rounds: Array<RoundContext & { at: number }> = [];
  const errors: unknown[] = [];
  const started = Date.now();
  const loop = track(
    new WakeLoop({
      name: 'test loop',
      pollMs: options.pollMs,
      logger: recordingLogger(errors),
      round: async (context) => {
        const n = rounds.length;
        rounds.push({ ...context, at: Date.now() - started });
        if (options.roundMs) await delay(options.roundMs);
        if (options.fail?.(n)) throw new Error(`round ${n} broke`);
        return options.answer?.(n);
      },
    }),
  );
  return { loop, rounds, errors };
}

function track(loop: WakeLoop): WakeLoop {
  started.push(loop);
  return loop;
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await delay(2);
  }
}

test('a nudge ends the sleep at once; the round after it was not timed out', async () => {
  const { loop, rounds } = loopOf({ pollMs: 60_000 });
  loop.start();
  await until(() => rounds.length >= 1);
  await delay(20);
  assert.equal(rounds.length, 1, 'asleep for the poll interval');
  loop.nudge();
  await until(() => rounds.length >= 2);
  assert.equal(rounds[1]?.timedOut, false);
  await loop.stop();
});

test('the round answers how long to sleep, bounded by the poll interval; a sleep that ran out says so', async () => {
  const { loop, rounds } = loopOf({ pollMs: 60_000, answer: (n) => (n === 0 ? 30 : undefined) });
  loop.start();
  await until(() => rounds.length >= 2);
  const [first, second] = rounds;
  assert.ok(second && first && second.at - first.at >= 25, 'slept about the 30 ms the round asked for');
  assert.equal(second?.timedOut, true);
  await loop.stop();

  const short = loopOf({ pollMs: 20, answer: () => 60_000 });
  short.loop.start();
  await until(() => short.rounds.length >= 3);
  await short.loop.stop();
});

test('a nudge during a round runs the next round without sleeping: work written meanwhile is not missed', async () => {
  const { loop, rounds } = loopOf({ pollMs: 60_000, roundMs: 30 });
  loop.start();
  await until(() => rounds.length >= 1);
  loop.nudge(); // while round 0 runs
  await until(() => rounds.length >= 2);
  assert.equal(rounds[1]?.timedOut, false);
  await delay(80);
  assert.equal(rounds.length, 2, 'then asleep again');
  await loop.stop();
});

test('a round that throws is logged with the loop name and the loop goes on after the poll interval', async () => {
  const { loop, rounds, errors } = loopOf({ pollMs: 25, answer: () => 0, fail: (n) => n === 0 });
  loop.start();
  await until(() => rounds.length >= 2);
  assert.equal(errors.length, 1);
  assert.match(JSON.stringify(errors[0]), /test loop failed/);
  const [first, second] = rounds;
  assert.ok(
    second && first && second.at - first.at >= 20,
    'a failed round does not spin: it waits the poll interval',
  );
  await loop.stop();
});

test('stop ends a sleep at once, lets a round under way finish, and runs no round after it', async () => {
  const sleeping = loopOf({ pollMs: 60_000 });
  sleeping.loop.start();
  await until(() => sleeping.rounds.length >= 1);
  const t0 = Date.now();
  await sleeping.loop.stop();
  assert.ok(Date.now() - t0 < 1000, 'did not wait out the poll interval');
  assert.equal(sleeping.loop.stopping, true);

  let finished = false;
  const busy = track(
    new WakeLoop({
      name: 'busy',
      pollMs: 60_000,
      logger: recordingLogger([]),
      round: async () => {
        await delay(50);
        finished = true;
        return 0;
      },
    }),
  );
  busy.start();
  await delay(5);
  await busy.stop();
  assert.equal(finished, true, 'the round under way finished before stop resolved');
  finished = false;
  await delay(80);
  assert.equal(finished, false, 'no round after stop');
});

test('rounds the database cannot answer: one line when it goes and one when it is back, backoff that nudges do not cut short', async () => {
  const lines: Array<{ level: string; message: string }> = [];
  const record = (level: string) => (_fields: unknown, message: string) => lines.push({ level, message });
  const logger = { error: record('error'), warn: record('warn'), info: record('info') } as unknown as Logger;
  const rounds: number[] = [];
  const start = Date.now();
  // The error a pg pool gives while the server is down (src/db/unavailable.ts reads its code).
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  const loop = track(
    new WakeLoop({
      name: 'test loop',
      pollMs: 60_000,
      logger,
      round: async () => {
        rounds.push(Date.now() - start);
        if (rounds.length <= 3) throw refused;
        return undefined;
      },
    }),
  );
  loop.start();
  await until(() => rounds.length >= 1);
  // Work ending nudges the loop; during the outage that must not bring the next try forward.
  for (let i = 0; i < 20; i++) loop.nudge();
  await until(() => rounds.length >= 4);
  const [first, second, third, fourth] = rounds as [number, number, number, number];
  assert.ok(second - first >= 240, `waited 250 ms before the second try, not ${second - first}`);
  assert.ok(third - second >= 490, `then 500 ms, not ${third - second}`);
  assert.ok(fourth - third >= 990, `then 1 s, not ${fourth - third}`);
  assert.deepEqual(lines, [
    { level: 'warn', message: 'test loop: the database is not reachable; trying again with backoff' },
    { level: 'info', message: 'test loop: the database answers again' },
  ]);
  await loop.stop();
});
