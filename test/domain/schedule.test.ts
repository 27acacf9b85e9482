// scheduledAt in plain words and ISO 8601, read against a fixed clock (Tuesday 2026-11-24 15:00 UTC).
import assert from 'node:assert/strict';
import { test } from 'node:test';
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
  assert.equal(at('next friday', 'Europe/Paris'), '2026-12-04T08:00:00.000Z');
  assert.equal(at('tomorrow', 'Asia/Tokyo'), '2026-11-26T00:00:00.000Z', 'already the 25th in Tokyo');
  assert.equal(at('2026-12-01'), '2026-12-01T09:00:00.000Z');
});

test('words that name a zone win over the timezone field', () => {
  assert.equal(at('tomorrow 9am PST', 'Europe/Paris'), '2026-11-25T17:00:00.000Z');
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
    ['tomorrow', 'Mars/Olympus'],
  ] as const) {
    assert.throws(
      () => resolveSchedule(words, NOW, zone),
      (err: unknown) => isFerryError(err, 'invalid'),
      words,
    );
  }
});
