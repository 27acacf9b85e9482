// newOrderedId (src/ids.ts): the audit log lists events newest first by (at, id); ids made in one
// millisecond, or on a clock that goes back, must still sort in the order they were made.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isUuid, newOrderedId } from '../../src/ids.js';

test('ids sort in the order they were made: within one millisecond, past 4,096 of them, and when the clock goes back', () => {
  const now = Date.parse('2026-11-27T12:00:00Z');
  const ids = [
    ...Array.from({ length: 5000 }, () => newOrderedId(now)),
    newOrderedId(now - 60_000),
    newOrderedId(now + 1),
    newOrderedId(now + 5000),
  ];
  for (const id of ids) assert.ok(isUuid(id), id);
  for (let i = 1; i < ids.length; i++) {
    assert.ok((ids[i - 1] as string) < (ids[i] as string), `${ids[i - 1]} before ${ids[i]} (at ${i})`);
  }
  assert.equal(new Set(ids).size, ids.length);
  assert.equal(ids[0]?.[14], '7', 'version 7');
});
