// src/queue/loop.ts: the loop the transfer worker, the send dispatcher, the webhook deliverer and the
// refresher run in. Its sleeps run on a hand timer (test/support/clock.ts): a test reads how long each
// sleep the loop asked for is and whether a nudge or stop ended it, and runs it out itself, so nothing
// here depends on how fast the machine is.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import type { Logger } from '../../src/log.js';
import { type RoundContext, WakeLoop } from '../../src/queue/loop.js';
import { HandTimer } from '../support/clock.js';
import { deferred } from '../support/deferred.js';
import { waitUntil } from '../support/wait.js';

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

/** A loop whose rounds are recorded; `answer` says what each round returns, `hold` what it waits for. */
function loopOf(options: {
  pollMs: number;
  answer?: (n: number) => number | undefined;
  hold?: (n: number) => Promise<void> | undefined;
  fail?: (n: number) => boolean;
}) {
  /** Each round's context, and how many sleeps the loop had asked for before it. */
  const rounds: Array<RoundContext & { sleepsBefore: number }> = [];
  const errors: unknown[] = [];
  const timer = new HandTimer();
  const loop = track(
    new WakeLoop({
      name: 'test loop',
      pollMs: options.pollMs,
      logger: recordingLogger(errors),
      timer,
      round: async (context) => {
        const n = rounds.length;
        rounds.push({ ...context, sleepsBefore: timer.sleeps.length });
        await options.hold?.(n);
        if (options.fail?.(n)) throw new Error(`round ${n} broke`);
        return options.answer?.(n);
      },
    }),
  );
  return { loop, rounds, errors, timer };
}

function track(loop: WakeLoop): WakeLoop {
  started.push(loop);
  return loop;
}

const roundsReach = (rounds: unknown[], count: number) =>
  waitUntil(() => rounds.length >= count, { what: `${count} rounds`, detail: () => `${rounds.length} ran` });

/** Resolves when `promise` has; fails the test if it never does (the hand timer never runs out alone). */
async function settles(promise: Promise<unknown>, what: string): Promise<void> {
  let settled = false;
  void promise.finally(() => {
    settled = true;
  });
  await waitUntil(() => settled, { what });
  await promise;
}

/** A turn of the event loop: every promise callback already queued has run by then. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a nudge ends the sleep at once; the round after it was not timed out', async () => {
  const { loop, rounds, timer } = loopOf({ pollMs: 60_000 });
  loop.start();
  const asleep = await timer.asked(0);
  assert.equal(asleep.ms, 60_000);
  assert.equal(rounds.length, 1, 'asleep for the poll interval');
  loop.nudge();
  assert.equal(asleep.state, 'canceled', 'the nudge ended the sleep');
  await roundsReach(rounds, 2);
  assert.equal(rounds[1]?.timedOut, false);
  await loop.stop();
});

test('the round answers how long to sleep, bounded by the poll interval; a sleep that ran out says so', async () => {
  const { loop, rounds, timer } = loopOf({ pollMs: 60_000, answer: (n) => (n === 0 ? 30 : undefined) });
  loop.start();
  const asked = await timer.asked(0);
  assert.equal(asked.ms, 30, 'slept the 30 ms the round asked for');
  asked.runOut();
  await roundsReach(rounds, 2);
  assert.equal(rounds[1]?.timedOut, true);
  assert.equal((await timer.asked(1)).ms, 60_000, 'a round that asks for nothing sleeps the poll interval');
  await loop.stop();

  const short = loopOf({ pollMs: 20, answer: () => 60_000 });
  short.loop.start();
  for (let n = 0; n < 2; n++) {
    const sleep = await short.timer.asked(n);
    assert.equal(sleep.ms, 20, 'a round asking for a minute sleeps the 20 ms poll interval');
    sleep.runOut();
  }
  await roundsReach(short.rounds, 3);
  await short.loop.stop();
});

test('a nudge during a round runs the next round without sleeping: work written meanwhile is not missed', async () => {
  const first = deferred();
  const { loop, rounds, timer } = loopOf({
    pollMs: 60_000,
    hold: (n) => (n === 0 ? first.promise : undefined),
  });
  loop.start();
  await roundsReach(rounds, 1);
  loop.nudge(); // while round 0 runs
  first.resolve();
  await roundsReach(rounds, 2);
  assert.equal(rounds[1]?.timedOut, false);
  assert.equal(rounds[1]?.sleepsBefore, 0, 'no sleep between the two rounds');
  // The loop asks for its next sleep after round 1: nothing ran between.
  assert.equal((await timer.asked(0)).ms, 60_000);
  assert.equal(rounds.length, 2, 'then asleep again');
  await loop.stop();
});

test('a round that throws is logged with the loop name and the loop goes on after the poll interval', async () => {
  const { loop, rounds, errors, timer } = loopOf({ pollMs: 25, answer: () => 0, fail: (n) => n === 0 });
  loop.start();
  const wait = await timer.asked(0);
  assert.equal(errors.length, 1);
  assert.match(JSON.stringify(errors[0]), /test loop failed/);
  assert.equal(wait.ms, 25, 'a failed round does not spin: it waits the poll interval');
  assert.equal(rounds.length, 1);
  wait.runOut();
  await roundsReach(rounds, 2);
  await loop.stop();
});

test('stop ends a sleep at once, lets a round under way finish, and runs no round after it', async () => {
  const sleeping = loopOf({ pollMs: 60_000 });
  sleeping.loop.start();
  const asleep = await sleeping.timer.asked(0);
  // The hand timer never runs out by itself: stop can only have ended the sleep.
  await settles(sleeping.loop.stop(), 'stop to end the sleep');
  assert.equal(asleep.state, 'canceled', 'did not wait out the poll interval');
  assert.equal(sleeping.loop.stopping, true);

  let finished = false;
  let rounds = 0;
  const inRound = deferred();
  const letGo = deferred();
  const timer = new HandTimer();
  const busy = track(
    new WakeLoop({
      name: 'busy',
      pollMs: 60_000,
      logger: recordingLogger([]),
      timer,
      round: async () => {
        rounds++;
        inRound.resolve();
        await letGo.promise;
        finished = true;
        return 0;
      },
    }),
  );
  busy.start();
  await inRound.promise;
  let stopped = false;
  const stopping = busy.stop().then(() => {
    stopped = true;
    return finished;
  });
  await nextTurn();
  assert.equal(stopped, false, 'stop waits for the round under way');
  letGo.resolve();
  await settles(stopping, 'stop after the round');
  assert.equal(await stopping, true, 'the round under way finished before stop resolved');
  finished = false;
  // The loop has returned: no sleep is left that could start a round, and none started.
  await nextTurn();
  assert.equal(timer.anyWaiting, false, 'no sleep left behind');
  assert.equal(rounds, 1);
  assert.equal(finished, false, 'no round after stop');
});

test('rounds the database cannot answer: one line when it goes and one when it is back, backoff that nudges do not cut short', async () => {
  const lines: Array<{ level: string; message: string }> = [];
  const record = (level: string) => (_fields: unknown, message: string) => lines.push({ level, message });
  const logger = { error: record('error'), warn: record('warn'), info: record('info') } as unknown as Logger;
  let rounds = 0;
  const timer = new HandTimer();
  // The error a pg pool gives while the server is down (src/db/unavailable.ts reads its code).
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  const loop = track(
    new WakeLoop({
      name: 'test loop',
      pollMs: 60_000,
      logger,
      timer,
      round: async () => {
        rounds++;
        if (rounds <= 3) throw refused;
        return undefined;
      },
    }),
  );
  loop.start();
  const first = await timer.asked(0);
  // Work ending nudges the loop; during the outage that must not bring the next try forward.
  for (let i = 0; i < 20; i++) loop.nudge();
  assert.equal(first.state, 'waiting', 'the nudges did not end the wait');
  assert.equal(rounds, 1);
  assert.equal(first.ms, 250, `waited 250 ms before the second try, not ${first.ms}`);
  first.runOut();
  const second = await timer.asked(1);
  assert.equal(second.ms, 500, `then 500 ms, not ${second.ms}`);
  second.runOut();
  const third = await timer.asked(2);
  assert.equal(third.ms, 1000, `then 1 s, not ${third.ms}`);
  third.runOut();
  // The fourth round goes through: the loop sleeps the poll interval again.
  assert.equal((await timer.asked(3)).ms, 60_000);
  assert.equal(rounds, 4);
  assert.deepEqual(lines, [
    { level: 'warn', message: 'test loop: the database is not reachable; trying again with backoff' },
    { level: 'info', message: 'test loop: the database answers again' },
  ]);
  await loop.stop();
});
