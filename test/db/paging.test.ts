// The cursors of every list (src/db/paging.ts, docs/api.md "Polling"): one page and the cursor of its
// last row only when more rows followed, and cursors that are not ferry's refused as 400.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeCursor, decodeSeqCursor, encodeCursor, encodeSeqCursor, pageOf } from '../../src/db/paging.js';
import { isFerryError } from '../../src/errors.js';

const refused = (f: () => unknown) =>
  assert.throws(
    f,
    (err: unknown) => isFerryError(err, 'invalid') && /cursor is not valid/.test((err as Error).message),
  );

test('pageOf keeps `limit` rows and answers the cursor of the last only when one more row was read', () => {
  const rows = [{ n: 1 }, { n: 2 }, { n: 3 }];
  assert.deepEqual(
    pageOf(rows, 2, (last) => `after ${last.n}`),
    { rows: [{ n: 1 }, { n: 2 }], next_cursor: 'after 2' },
  );
  assert.deepEqual(
    pageOf(rows, 3, (last) => `after ${last.n}`),
    { rows },
    'no more rows: no cursor',
  );
  assert.deepEqual(
    pageOf([], 3, () => 'never'),
    { rows: [] },
  );
});

test('a time-and-id cursor reads back as written; another text is refused', () => {
  const id = '0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b';
  assert.deepEqual(decodeCursor(encodeCursor(1_700_000_000_000, id)), { createdAt: 1_700_000_000_000, id });
  refused(() => decodeCursor('nonsense'));
  refused(() => decodeCursor(Buffer.from('12:not-a-uuid').toString('base64url')));
});

test('a sequence cursor reads back as written, none is before the first, and another text is refused', () => {
  assert.equal(decodeSeqCursor(encodeSeqCursor(41)), 41);
  assert.equal(decodeSeqCursor(undefined), -1);
  refused(() => decodeSeqCursor('nonsense'));
  refused(() => decodeSeqCursor(Buffer.from('-3').toString('base64url')));
  refused(() => decodeSeqCursor(Buffer.from('1.5').toString('base64url')));
});
