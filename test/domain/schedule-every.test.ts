// Schedules' `every` (docs/api.md, "Schedules"): the words grammar and what it translates to, every
// refusal naming the part not understood, the 5-minute floor, and the next run across the
// daylight-saving changes of Europe/Paris and America/New_York: a daily 02:30 on the spring-forward day
// and a daily 01:30 on the fall-back day each run exactly once that day, at the documented time.
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { CronDate } from 'croner';
import { EVERY_MAX } from '../../src/api/schedules.js';
import { nextRun, readEvery, wordsToCron } from '../../src/domain/schedules/every.js';
import { isFerryError } from '../../src/errors.js';

const GRAMMAR: Array<[string, string]> = [
  ['every day at 02:00', '0 2 * * *'],
  ['every day', '0 0 * * *'],
  ['Every Day At 2:05', '5 2 * * *'],
  ['every monday at 9am', '0 9 * * 1'],
  ['every mondays at 9 am', '0 9 * * 1'],
  ['every sunday at 12am', '0 0 * * 0'],
  ['every friday at 12pm', '0 12 * * 5'],
  ['every friday at noon', '0 12 * * 5'],
  ['every day at midnight', '0 0 * * *'],
  ['every monday and thursday at 9:30pm', '30 21 * * 1,4'],
  ['every monday, wednesday and friday at 07:15', '15 7 * * 1,3,5'],
  ['every friday, monday', '0 0 * * 1,5'],
  ['every weekday at 18:30', '30 18 * * 1-5'],
  ['every weekend at 10am', '0 10 * * 0,6'],
  ['every 15 minutes', '*/15 * * * *'],
  ['every 5 minutes', '*/5 * * * *'],
  ['every 30 minutes', '*/30 * * * *'],
  ['every hour', '0 * * * *'],
  ['every 1 hour', '0 * * * *'],
  ['every 2 hours', '0 */2 * * *'],
  ['every 12 hours', '0 */12 * * *'],
  ['every month on the 1st at 03:00', '0 3 1 * *'],
  ['every month on the 15th', '0 0 15 * *'],
  ['every month on 31 at 23:59', '59 23 31 * *'],
];

test('the words grammar translates each form to one cron expression', () => {
  for (const [words, cron] of GRAMMAR) {
    assert.equal(wordsToCron(words), cron, words);
    assert.equal(readEvery(words, 'UTC').cron, cron, words);
  }
});

function refused(every: string, pattern: RegExp, timezone = 'UTC'): void {
  assert.throws(
    () => readEvery(every, timezone),
    (err: unknown) => isFerryError(err, 'invalid') && pattern.test(err.message),
    every,
  );
}

test('words ferry does not know are 400 naming the part not understood', () => {
  refused('every fortnight', /"fortnight" is not understood/);
  refused('every day at 25:00', /"25:00" is not understood/);
  refused('every day at 9', /"9" is not understood/);
  refused('every day at 13pm', /"13pm" is not understood/);
  refused('every day around 9am', /"around 9am" is not understood/);
  refused('every monday and funday', /"funday" is not understood/);
  refused('every 3 weeks', /"weeks" is not understood/);
  refused('every hour on the dot', /"on the dot" is not understood/);
  refused('every month on the 32nd', /"32nd" is not understood/);
  refused('every month at 3am', /"at" is not understood/);
  refused('every', /"every" is not understood/);
  refused('each day at 02:00', /five fields/);
  refused('every 7 minutes', /7 minutes does not divide the hour/);
  refused('every 5 hours', /5 hours does not divide the day/);
});

test('nothing runs more often than every 5 minutes, in words or cron', () => {
  refused('every minute', /too often.*every 5 minutes/);
  refused('every 2 minutes', /too often/);
  refused('* * * * *', /more often than every 5 minutes/);
  refused('*/4 * * * *', /more often than every 5 minutes/);
  refused('0,3 9 * * *', /more often than every 5 minutes/);
  // The gap across the hour: 02 and 58 are 4 minutes apart from one hour to the next.
  refused('2,58 * * * *', /more often than every 5 minutes/);
  // Once a day at 23:58 and 00:01: 3 minutes apart across midnight.
  refused('1,58 0,23 * * *', /more often than every 5 minutes/);
  assert.equal(readEvery('*/5 * * * *', 'UTC').cron, '*/5 * * * *');
  assert.equal(readEvery('0,5 9 * * *', 'UTC').cron, '0,5 9 * * *');
});

test('cron expressions: five fields, read by croner; one that never fires is refused without a search', () => {
  assert.equal(readEvery('  30   2 * * MON-FRI ', 'UTC').cron, '30 2 * * MON-FRI');
  refused('0 0 0 * * *', /has 6/);
  refused('@daily', /has 1/);
  refused('61 * * * *', /not a cron expression.*minute/);
  refused('a b c d e', /not a cron expression/);
  refused('0 0 30 2 *', /never run/);
  refused('0 0 31 4,6,9,11 *', /never run/);
  // February 29th comes every four years; it is a day that exists.
  assert.equal(readEvery('0 0 29 2 *', 'UTC').cron, '0 0 29 2 *');
  // croner's search, counted in its own steps (CronDate.recurse, one per candidate it examines) rather
  // than timed: a day that never comes is searched for up to croner's year-3000 limit, thousands of
  // steps; refused from the fields, croner takes none. A pattern that fires shows that the count counts.
  // (recurse is private in croner's types: the prototype is read as the object it is.)
  const steps = mock.method(CronDate.prototype as unknown as { recurse(): unknown }, 'recurse');
  try {
    assert.equal(
      nextRun('0 0 29 2 *', 'UTC', Date.parse('2026-03-01T00:00:00Z')),
      Date.parse('2028-02-29T00:00:00Z'),
    );
    assert.ok(steps.mock.callCount() > 0, 'croner searched for the next February 29th');
    steps.mock.resetCalls();
    refused('0 0 31 2 *', /never run/);
    refused('0 0 30 2 *', /never run/);
    assert.equal(steps.mock.callCount(), 0, 'refused from the fields, not by searching years');
  } finally {
    steps.mock.restore();
  }
});

test('every is at most 100 characters, checked before it is read', () => {
  refused(`every day at 02:00${' '.repeat(EVERY_MAX)}`, /at most 100 characters/);
  refused('x'.repeat(10_000), /at most 100 characters/);
});

/** The next runs after `from` in `timezone`, as UTC ISO strings. */
function runs(cron: string, timezone: string, from: string, n: number): string[] {
  const out: string[] = [];
  let at = Date.parse(from);
  for (let i = 0; i < n; i += 1) {
    const next = nextRun(cron, timezone, at);
    assert.ok(next !== undefined);
    out.push(new Date(next).toISOString());
    at = next;
  }
  return out;
}

test('Europe/Paris, spring forward (2027-03-28): a daily 02:30, which does not exist that day, runs once at 03:30 CEST', () => {
  assert.deepEqual(runs('30 2 * * *', 'Europe/Paris', '2027-03-27T00:00:00Z', 3), [
    '2027-03-27T01:30:00.000Z', // 02:30 CET
    '2027-03-28T01:30:00.000Z', // 03:30 CEST: the gap's hour later
    '2027-03-29T00:30:00.000Z', // 02:30 CEST
  ]);
});

test('Europe/Paris, fall back (2027-10-31): a daily 01:30 runs once; a 02:30, which exists twice, at its first (CEST)', () => {
  assert.deepEqual(runs('30 1 * * *', 'Europe/Paris', '2027-10-30T00:00:00Z', 3), [
    // Paris repeats 02:00-03:00, so 01:30 on the 31st exists once: 01:30 CEST, before the change.
    '2027-10-30T23:30:00.000Z',
    '2027-11-01T00:30:00.000Z', // 01:30 CET
    '2027-11-02T00:30:00.000Z',
  ]);
  assert.deepEqual(runs('30 2 * * *', 'Europe/Paris', '2027-10-30T12:00:00Z', 2), [
    '2027-10-31T00:30:00.000Z', // 02:30 CEST, the first of the two
    '2027-11-01T01:30:00.000Z', // 02:30 CET the next day: not 01:30Z on the 31st
  ]);
});

test('America/New_York, spring forward (2027-03-14): a daily 02:30 runs once, at 03:30 EDT', () => {
  assert.deepEqual(runs('30 2 * * *', 'America/New_York', '2027-03-13T12:00:00Z', 3), [
    '2027-03-14T07:30:00.000Z', // 03:30 EDT
    '2027-03-15T06:30:00.000Z', // 02:30 EDT
    '2027-03-16T06:30:00.000Z',
  ]);
});

test('America/New_York, fall back (2027-11-07): a daily 01:30, which exists twice, runs once, at 01:30 EDT', () => {
  assert.deepEqual(runs('30 1 * * *', 'America/New_York', '2027-11-06T12:00:00Z', 3), [
    '2027-11-07T05:30:00.000Z', // 01:30 EDT; not again at 01:30 EST (06:30Z)
    '2027-11-08T06:30:00.000Z', // 01:30 EST
    '2027-11-09T06:30:00.000Z',
  ]);
});

test('the next run is strictly after the time asked from', () => {
  const at = Date.parse('2027-01-01T02:00:00Z');
  assert.equal(nextRun('0 2 * * *', 'UTC', at), Date.parse('2027-01-02T02:00:00Z'));
  assert.equal(nextRun('0 2 * * *', 'UTC', at - 1), at);
});

test('an hourly schedule does not fire again in the hour a fall-back repeats (America/New_York, 2027-11-07)', () => {
  assert.deepEqual(runs('0 * * * *', 'America/New_York', '2027-11-07T03:30:00Z', 4), [
    '2027-11-07T04:00:00.000Z', // 00:00 EDT
    '2027-11-07T05:00:00.000Z', // 01:00 EDT
    '2027-11-07T07:00:00.000Z', // 02:00 EST: 01:00 EST (06:00Z) is the repeated hour
    '2027-11-07T08:00:00.000Z',
  ]);
});
