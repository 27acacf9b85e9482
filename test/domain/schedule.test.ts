// scheduledAt in plain words and ISO 8601, read against a fixed clock (Tuesday 2026-11-24 15:00 UTC).
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import * as chrono from 'chrono-node';
import { SCHEDULED_AT_MAX } from '../../src/api/input.js';
import { resolveSchedule } from '../../src/domain/sends/schedule.js';
import { isFerryError } from '../../src/errors.js';

const NOW = Date.parse('2026-11-24T15:00:00Z');
const at = (words: string, timezone?: string) =>
  new Date(resolveSchedule(words, NOW, timezone)).toISOString();

test('"tomorrow at 9am" is 09:00 UTC, or 09:00 in the zone given', () => {
  assert.equal(at('tomorrow at 9am'), '2026-11-25T09:00:00.000Z');
  assert.equal(at('tomorrow at 9am', 'Europe/Paris'), '2026-11-25T08:00:00.000Z');
  assert.equal(at('tomorrow at 9am', 'America/New_York'), '2026-11-25T14:00:00.000Z');
});

test('relative words count from now, whatever the zone', () => {
  assert.equal(at('in 90 minutes'), '2026-11-24T16:30:00.000Z');
  assert.equal(at('in 2 hours', 'Asia/Tokyo'), '2026-11-24T17:00:00.000Z');
});

test('a bare day means 09:00 in the zone; "tomorrow" is the zone\'s tomorrow', () => {
  assert.equal(at('friday'), '2026-11-27T09:00:00.000Z');
  assert.equal(at('next friday', 'Europe/Paris'), '2026-11-27T08:00:00.000Z', 'the coming Friday');
  assert.equal(at('tomorrow', 'Asia/Tokyo'), '2026-11-26T00:00:00.000Z', 'already the 25th in Tokyo');
  assert.equal(at('2026-12-01'), '2026-12-01T09:00:00.000Z');
});

test('"next friday" is the coming Friday, as people mean it: said on a Wednesday, two days on; said on a Friday, a week on', () => {
  const said = (when: string, words: string, timezone?: string) =>
    new Date(resolveSchedule(words, Date.parse(when), timezone)).toISOString();
  const wednesday = '2026-12-02T10:00:00Z';
  assert.equal(said(wednesday, 'next friday'), '2026-12-04T09:00:00.000Z');
  assert.equal(said(wednesday, 'next Friday 17:00'), '2026-12-04T17:00:00.000Z');
  assert.equal(said(wednesday, 'next fri at 5pm', 'Europe/Paris'), '2026-12-04T16:00:00.000Z');
  assert.equal(said(wednesday, 'next friday EST'), '2026-12-04T14:00:00.000Z', 'with a zone in the words');
  assert.equal(said(wednesday, 'next monday'), '2026-12-07T09:00:00.000Z');
  assert.equal(said(wednesday, 'next wednesday'), '2026-12-09T09:00:00.000Z', 'its own weekday: a week on');
  // On a Friday, before and after its 09:00: never today.
  assert.equal(said('2026-12-04T07:00:00Z', 'next friday'), '2026-12-11T09:00:00.000Z');
  assert.equal(said('2026-12-04T10:00:00Z', 'next friday'), '2026-12-11T09:00:00.000Z');
  assert.equal(
    said('2026-12-04T07:00:00Z', 'friday'),
    '2026-12-04T09:00:00.000Z',
    '"friday" alone is today until 09:00',
  );
  // Saturday: the Friday of the week to come, six days on.
  assert.equal(said('2026-12-05T10:00:00Z', 'next friday'), '2026-12-11T09:00:00.000Z');
  // "next" before anything but a weekday is chrono's as before.
  assert.equal(said(wednesday, 'next week'), '2026-12-09T09:00:00.000Z');
});

test('words that name a zone win over the timezone field', () => {
  assert.equal(at('tomorrow 9am PST', 'Europe/Paris'), '2026-11-25T17:00:00.000Z');
});

test('a bare day with a zone named in the words means 09:00 in that zone', () => {
  assert.equal(at('friday EST'), '2026-11-27T14:00:00.000Z');
  assert.equal(at('tomorrow PST'), '2026-11-25T17:00:00.000Z');
  assert.equal(at('friday JST'), '2026-11-27T00:00:00.000Z');
  assert.equal(at('friday EST', 'Europe/Paris'), '2026-11-27T14:00:00.000Z', 'the words win');
});

test('a bare day with an offset named in the words means 09:00 at that offset', () => {
  assert.equal(at('friday UTC+2'), '2026-11-27T07:00:00.000Z');
  assert.equal(at('friday +0530'), '2026-11-27T03:30:00.000Z');
  assert.equal(at('friday -05:00'), '2026-11-27T14:00:00.000Z');
  assert.equal(at('friday 10:30 +02:00', 'Asia/Tokyo'), '2026-11-27T08:30:00.000Z', 'a time at it');
});

test('"tomorrow" with a zone named in the words is that zone\'s tomorrow', () => {
  // 03:00 UTC on the 25th is 19:00 on the 24th in PST: its tomorrow is the 25th.
  const late = Date.parse('2026-11-25T03:00:00Z');
  const iso = (words: string) => new Date(resolveSchedule(words, late)).toISOString();
  assert.equal(iso('tomorrow PST'), '2026-11-25T17:00:00.000Z');
  assert.equal(iso('tomorrow 9am PST'), '2026-11-25T17:00:00.000Z');
});

test('daylight saving: a bare day and a time on the day the clocks change, and hours across the change', () => {
  // New York springs forward at 02:00 on Sunday 2026-03-08 and falls back on Sunday 2026-11-01; Paris
  // springs forward on Sunday 2026-03-29.
  const on = (now: string, words: string, timezone?: string) =>
    new Date(resolveSchedule(words, Date.parse(now), timezone)).toISOString();
  assert.equal(on('2026-03-07T15:00:00Z', 'tomorrow', 'America/New_York'), '2026-03-08T13:00:00.000Z');
  assert.equal(on('2026-03-28T15:00:00Z', 'tomorrow at 9am', 'Europe/Paris'), '2026-03-29T07:00:00.000Z');
  assert.equal(on('2026-10-31T15:00:00Z', 'tomorrow', 'America/New_York'), '2026-11-01T14:00:00.000Z');
  assert.equal(on('2026-03-08T06:30:00Z', 'in 2 hours', 'America/New_York'), '2026-03-08T08:30:00.000Z');
  // "ET" follows daylight saving; "EST" is UTC-5 all year.
  assert.equal(on('2026-07-10T10:00:00Z', 'tomorrow ET'), '2026-07-11T13:00:00.000Z');
  assert.equal(on('2026-07-10T10:00:00Z', 'friday EST'), '2026-07-10T14:00:00.000Z');
});

test('a weekday said on that weekday is today before 09:00 and next week after it', () => {
  // Friday 2026-11-27.
  assert.equal(
    new Date(resolveSchedule('friday', Date.parse('2026-11-27T08:00:00Z'))).toISOString(),
    '2026-11-27T09:00:00.000Z',
  );
  assert.equal(
    new Date(resolveSchedule('friday', Date.parse('2026-11-27T10:00:00Z'))).toISOString(),
    '2026-12-04T09:00:00.000Z',
  );
});

test('ISO 8601 with an offset is taken as it is; without one it is read in the zone', () => {
  assert.equal(at('2026-12-01T10:00:00Z', 'Europe/Paris'), '2026-12-01T10:00:00.000Z');
  assert.equal(at('2026-12-01T10:00:00+02:00'), '2026-12-01T08:00:00.000Z');
  assert.equal(at('2026-12-01T10:00', 'Europe/Paris'), '2026-12-01T09:00:00.000Z');
});

test('the past, unreadable words, more than a year ahead and an unknown zone are 400 (invalid)', () => {
  for (const [words, zone] of [
    ['yesterday', undefined],
    ['2026-11-24T14:59:00Z', undefined],
    ['when pigs fly', undefined],
    ['in 2 years', undefined],
    ['in 366 days', undefined],
    ['+275760-09-13T00:00:00Z', undefined],
    ['2027-11-24T15:00:01Z', undefined],
    ['tomorrow', 'Mars/Olympus'],
  ] as const) {
    assert.throws(
      () => resolveSchedule(words, NOW, zone),
      (err: unknown) => isFerryError(err, 'invalid'),
      words,
    );
  }
});

/** The 400 resolveSchedule gives for `words`, or a failure when it accepts them. */
function refusal(words: string, timezone?: string): string {
  try {
    resolveSchedule(words, NOW, timezone);
  } catch (err) {
    assert.ok(isFerryError(err, 'invalid'), String(err));
    return err.message;
  }
  assert.fail(`"${words}" was accepted as ${at(words, timezone)}`);
}

test('words are taken only when all of them are understood; the 400 names the part that was not', () => {
  assert.match(refusal('not tomorrow'), /"not" is not understood/);
  assert.match(refusal('the day after never'), /"never" is not understood/);
  assert.match(refusal('tomorrow-ish'), /"ish" is not understood/);
  assert.match(
    refusal('9am on the 31st of february', 'Europe/Paris'),
    /"31st of february" is not understood/,
  );
  assert.match(refusal('tomorrow and friday'), /names more than one time/);
  assert.match(refusal('whenever'), /is not a time ferry can read/);
  // Each refusal suggests forms that work.
  assert.match(
    refusal('not tomorrow'),
    /like "tomorrow at 9am", "next friday 17:00", "in 2 hours", or ISO 8601/,
  );
});

test('phrases people write, with filler words and punctuation, in a zone and across a daylight-saving change', () => {
  const table: Array<[string, string | undefined, string]> = [
    ['tomorrow at 9am', undefined, '2026-11-25T09:00:00.000Z'],
    ['Tomorrow, 9 a.m.', undefined, '2026-11-25T09:00:00.000Z'],
    ['at 5pm tomorrow', undefined, '2026-11-25T17:00:00.000Z'],
    ['on monday at 10', 'Europe/Paris', '2026-11-30T09:00:00.000Z'],
    ['the 3rd of march at noon', undefined, '2027-03-03T12:00:00.000Z'],
    ['dec 24 at 18:00', 'America/New_York', '2026-12-24T23:00:00.000Z'],
    ['in 3 days', undefined, '2026-11-27T09:00:00.000Z'], // a bare day: 09:00
    // After the spring change in Europe (2027-03-28) Paris is UTC+2; in New York (2027-03-14) UTC-4.
    ['april 2 at 9am', 'Europe/Paris', '2027-04-02T07:00:00.000Z'],
    ['march 20 at 9:30', 'America/New_York', '2027-03-20T13:30:00.000Z'],
    ['march 10 at 9:30', 'America/New_York', '2027-03-10T14:30:00.000Z'],
  ];
  for (const [words, timezone, expected] of table) assert.equal(at(words, timezone), expected, words);
});

test('365 days ahead is the last moment accepted, in words and in ISO 8601 with an expanded year', () => {
  assert.equal(at('in 365 days'), '2027-11-24T09:00:00.000Z');
  assert.equal(at('2027-11-24T15:00:00Z'), '2027-11-24T15:00:00.000Z');
  assert.equal(at('+002027-01-01'), '2027-01-01T09:00:00.000Z');
});

test('a text over 100 characters is refused before the words are read; the longest accepted is read once', () => {
  // What chrono-node is given to read, counted rather than timed: its cost grows with the text.
  const reads = mock.method(chrono.casual, 'parse');
  try {
    assert.throws(
      () => resolveSchedule('tomorrow at 9am '.repeat(6250), NOW),
      (err: unknown) => isFerryError(err, 'invalid') && /at most 100 characters/.test(err.message),
    );
    assert.equal(reads.mock.callCount(), 0, 'chrono read none of it');
    const longest = ` ${'on the '.repeat(12)}tomorrow at 9am`;
    assert.equal(longest.length, SCHEDULED_AT_MAX);
    const started = performance.now();
    assert.equal(new Date(resolveSchedule(longest, NOW)).toISOString(), '2026-11-25T09:00:00.000Z');
    const took = performance.now() - started;
    assert.deepEqual(
      reads.mock.calls.map((call) => call.arguments[0].length),
      [longest.trim().length],
      'the text read once, trimmed',
    );
    // What chrono does with the 100 characters it is given cannot be counted from outside. The bound is
    // only for a cost that explodes (a pattern of chrono's that backtracks catastrophically takes
    // longer than any test would wait); a first reading, which also compiles chrono's patterns, takes a
    // few hundred milliseconds on a loaded machine.
    assert.ok(took < 10_000, `${took.toFixed(0)} ms`);
  } finally {
    reads.mock.restore();
  }
});
