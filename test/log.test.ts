// src/log.ts: the stdout destination hands the lines of one turn of the event loop on as one write, and
// writes everything, the current turn's lines too, when the process exits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { createLogger, isoTime, TurnBatch } from '../src/log.js';

class Recorder {
  readonly writes: string[] = [];
  flushed = 0;
  write(text: string) {
    this.writes.push(text);
  }
  flushSync() {
    this.flushed++;
  }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('the lines of one turn go out together once the turn is over, in order, none lost', async () => {
  const out = new Recorder();
  const logger = createLogger('info', new TurnBatch(out));
  for (let i = 0; i < 50; i++) logger.info({ i }, 'request');
  assert.equal(out.writes.length, 0, 'nothing is written during the turn');
  await nextTurn();
  assert.equal(out.writes.length, 1);
  const lines = (out.writes[0] ?? '').split('\n').filter(Boolean);
  assert.deepEqual(
    lines.map((l) => JSON.parse(l).i),
    Array.from({ length: 50 }, (_, i) => i),
  );
  logger.info({ i: 50 }, 'request');
  await nextTurn();
  assert.equal(out.writes.length, 2);
  assert.equal(JSON.parse(out.writes[1] ?? '').i, 50);
});

test('flushSync writes the lines of the current turn before flushing what it writes to', () => {
  const out = new Recorder();
  const batch = new TurnBatch(out);
  createLogger('info', batch).info('before exit');
  batch.flushSync();
  assert.equal(out.writes.length, 1);
  assert.match(out.writes[0] ?? '', /"msg":"before exit"/);
  assert.equal(out.flushed, 1);
});

test("each line's time is the millisecond it was written, as pino's isoTime writes it", (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-11-25T22:00:00.000Z') });
  assert.equal(isoTime(), pino.stdTimeFunctions.isoTime());
  assert.equal(isoTime(), ',"time":"2026-11-25T22:00:00.000Z"');
  t.mock.timers.tick(1);
  assert.equal(isoTime(), ',"time":"2026-11-25T22:00:00.001Z"');
  t.mock.timers.tick(59_999);
  assert.equal(isoTime(), ',"time":"2026-11-25T22:01:00.000Z"');
});
