// What the bytes of a file through ferry are held to (src/domain/file-bytes.ts; docs/api.md, "Files
// through ferry"): an upload's body cut off once it passes its limit, and stopped as stalled (408) when
// no byte comes; a download's bytes counted, and its source ended with it; the largest upload a store's
// limits allow, with and without a known size. No socket, no database.
import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import { counted, largestUpload, UploadBody } from '../../src/domain/file-bytes.js';
import { FerryError } from '../../src/errors.js';

const sink = () => new Writable({ write: (_c, _e, d) => d() });

test('an upload body of unknown size is cut off with too_large once it passes the limit', async () => {
  const body = new UploadBody(
    10,
    60_000,
    () => {},
    () => new Error('unused'),
  );
  const limited = new UploadBody(
    10,
    60_000,
    () => {},
    () => Object.assign(new Error('past 10 bytes'), { kind: 'too_large' }),
  );
  await pipeline(Readable.from([Buffer.alloc(6), Buffer.alloc(4)]), body, sink());
  assert.equal(body.bytes, 10);
  await assert.rejects(
    pipeline(Readable.from([Buffer.alloc(6), Buffer.alloc(5)]), limited, sink()),
    /past 10 bytes/,
  );
});

test('an upload body with no byte for its idle time is stopped as stalled (408), having counted what came', async () => {
  const seen: number[] = [];
  const body = new UploadBody(
    100,
    20,
    (bytes) => seen.push(bytes),
    () => new Error('unused'),
  );
  body.pipe(sink());
  body.write(Buffer.alloc(3));
  const err = await new Promise<unknown>((resolve) => body.once('error', resolve));
  assert.ok(err instanceof FerryError);
  assert.equal(err.kind, 'stalled');
  assert.match(err.message, /no byte of the body arrived for 0.02 s; the upload was stopped/);
  assert.deepEqual(seen, [3]);
});

test("a download's bytes are counted as they leave, and destroying the count ends its source", async () => {
  let total = 0;
  const source = Readable.from([Buffer.alloc(5), Buffer.alloc(7)]);
  await pipeline(
    counted(source, (bytes) => {
      total += bytes;
    }),
    sink(),
  );
  assert.equal(total, 12);
  const endless = new Readable({ read() {} });
  const meter = counted(endless, () => {});
  meter.destroy();
  await new Promise((resolve) => endless.once('close', resolve));
  assert.equal(endless.destroyed, true);
});

test('the largest upload is the largest part times the most parts with a size, the smallest part without', () => {
  const limits = { minPartSize: 5, maxPartSize: 100, maxParts: 10, singleRequestMax: 100 };
  assert.equal(largestUpload(limits, true), 1000);
  assert.equal(largestUpload(limits, false), 50);
  assert.equal(
    largestUpload({ minPartSize: 5, maxPartSize: 2 ** 52, maxParts: 10_000, singleRequestMax: 5 }, true),
    Number.MAX_SAFE_INTEGER,
  );
});
