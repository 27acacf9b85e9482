// The shared upload plumbing: PartReader filling caller buffers, uploadParts lending its part buffers
// and reusing them, and hashes computed on the hashing thread.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { CRC32C } from '@google-cloud/storage';
import { PartReader, uploadParts } from '../../src/stores/shared/chunks.js';
import { HASH_THREAD_NICE, ThreadedHash } from '../../src/stores/shared/hash-thread.js';
import { contentHash } from '../fakes/dropbox/state.js';
import { QuickXorHash } from '../fakes/onedrive/quickxor.js';

/** `data` as a stream of uneven chunks, so parts straddle chunk boundaries. */
function chunked(data: Buffer, sizes = [1000, 7, 65_536, 3]): Readable {
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < data.length; i++) {
    const size = sizes[i % sizes.length] as number;
    chunks.push(data.subarray(at, at + size));
    at += size;
  }
  return Readable.from(chunks);
}

describe('PartReader', () => {
  test('read(size, into) copies the next bytes into the given buffer and returns a view of it', async () => {
    const data = randomBytes(200_000);
    const reader = new PartReader(chunked(data), data.length);
    const block = Buffer.alloc(70_000);
    const first = await reader.read(70_000, block);
    assert.equal(first.buffer, block.buffer, 'a view of the caller’s buffer');
    assert.deepEqual(first, data.subarray(0, 70_000));
    const second = await reader.read(70_000, block);
    assert.deepEqual(second, data.subarray(70_000, 140_000));
    const last = await reader.read(70_000, block);
    assert.equal(last.length, 60_000);
    assert.deepEqual(last, data.subarray(140_000));
    assert.equal((await reader.read(70_000, block)).length, 0);
    reader.assertComplete();
  });
});

describe('uploadParts', () => {
  test('lends each part a reused shared buffer, never more than `concurrency` at once; a short last part gets a buffer of its size', async () => {
    const partSize = 10_000;
    const data = randomBytes(partSize * 12 + 123);
    const reader = new PartReader(chunked(data), data.length);
    const received: Buffer[] = [];
    const buffers = new Set<ArrayBufferLike>();
    let inFlight = 0;
    let most = 0;
    // Each part is held until three are in flight (or the last has begun), then the newest settles
    // first, so the parts settle out of order. Whether to let one go is decided a turn of the event loop
    // after each part begins or settles: the source is in memory, so every part the loop could begin
    // without a free permit has begun by then, and a loop past its bound shows more than three.
    const lastIndex = 12;
    const held = new Map<number, () => void>();
    let lastBegun = false;
    const settleNewest = () =>
      setImmediate(() => {
        if (held.size === 0 || (held.size < 3 && !lastBegun)) return;
        const newest = Math.max(...held.keys());
        const settle = held.get(newest);
        held.delete(newest);
        settle?.();
      });
    const { parts, size } = await uploadParts({
      reader,
      partSize,
      concurrency: 3,
      uploadPart: async ({ index, offset, data: part }) => {
        inFlight++;
        most = Math.max(most, inFlight);
        assert.ok(part.buffer instanceof SharedArrayBuffer, 'part buffers are shared memory');
        buffers.add(part.buffer);
        assert.equal(offset, index * partSize);
        if (index === lastIndex) lastBegun = true;
        const turn = new Promise<void>((resolve) => held.set(index, resolve));
        settleNewest();
        await turn;
        received[index] = Buffer.from(part); // the part is only lent until this call settles
        inFlight--;
        settleNewest(); // once the last part has begun, no new part comes to let the next one go
      },
    });
    assert.equal(parts, 13);
    assert.equal(size, data.length);
    assert.equal(most, 3);
    const full = [...buffers].filter((b) => b.byteLength === partSize);
    assert.ok(full.length <= 3, `${full.length} full-size buffers for 12 full parts`);
    assert.deepEqual(
      [...buffers].filter((b) => b.byteLength !== partSize).map((b) => b.byteLength),
      [123],
      'the last part of a body of known size holds its own size',
    );
    assert.deepEqual(Buffer.concat(received), data);
  });
});

describe('ThreadedHash', () => {
  const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');

  test('hashes shared and ordinary memory in order, and several streams at once', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const shared = Buffer.from(new SharedArrayBuffer(1024 * 1024));
    const a = new ThreadedHash('md5');
    const b = new ThreadedHash('sha1');
    for (let at = 0; at < data.length; at += shared.length) {
      const piece = data.subarray(at, at + shared.length);
      piece.copy(shared);
      // Shared memory is read in place: it may be refilled only once the update has settled.
      await a.update(shared.subarray(0, piece.length));
      // Ordinary memory is copied before the update settles: the caller may change it from then on.
      const ordinary = Buffer.from(piece);
      await b.update(ordinary);
      ordinary.fill(0);
    }
    assert.equal((await a.digest()).toString('hex'), md5(data));
    assert.equal((await b.digest()).toString('hex'), createHash('sha1').update(data).digest('hex'));
  });

  test('an empty hash, and a discarded one, leave the thread serving others', async () => {
    const empty = new ThreadedHash('md5');
    assert.equal((await empty.digest()).toString('hex'), md5(Buffer.alloc(0)));
    const dropped = new ThreadedHash('md5');
    await dropped.update(Buffer.from('abandoned upload'));
    dropped.discard();
    const next = new ThreadedHash('md5');
    await next.update(Buffer.from('hello'));
    assert.equal((await next.digest()).toString('hex'), md5(Buffer.from('hello')));
  });
});

describe('the providers’ own hashes on the hashing thread', () => {
  async function threaded(kind: 'crc32c' | 'quickxor' | 'dropbox', pieces: Buffer[]): Promise<Buffer> {
    const hash = new ThreadedHash(kind);
    for (const piece of pieces) await hash.update(piece);
    return hash.digest();
  }
  /** `data` in uneven pieces, so a hash's state crosses update boundaries at odd offsets. */
  function uneven(data: Buffer, sizes = [1, 159, 161, 4096, 333]): Buffer[] {
    const pieces: Buffer[] = [];
    for (let at = 0, i = 0; at < data.length; at += sizes[i++ % sizes.length] as number) {
      pieces.push(data.subarray(at, at + (sizes[i % sizes.length] as number)));
    }
    return pieces;
  }

  test('CRC32C is the Castagnoli check value, big-endian, and agrees with the one GCS’s library computes', async () => {
    // RFC 3720 B.4 and every CRC catalogue: CRC-32C of "123456789" is e3069283.
    assert.equal((await threaded('crc32c', [Buffer.from('123456789')])).toString('hex'), 'e3069283');
    assert.equal((await threaded('crc32c', [])).toString('hex'), '00000000');
    const data = randomBytes(100_000);
    const library = new CRC32C();
    library.update(data);
    assert.equal((await threaded('crc32c', uneven(data))).toString('base64'), library.toString());
  });

  test('QuickXorHash gives rclone’s recorded vectors and agrees with the fake OneDrive’s byte-wise one', async () => {
    // Inputs and hashes, base64, from rclone's backend/onedrive/quickxorhash/quickxorhash_test.go
    // (checked against OneDrive), after Microsoft's algorithm (learn.microsoft.com/onedrive/developer/
    // code-snippets/quickxorhash).
    const vectors = [
      ['', 'AAAAAAAAAAAAAAAAAAAAAAAAAAA='],
      ['Sg==', 'SgAAAAAAAAAAAAAAAQAAAAAAAAA='],
      ['tbQ=', 'taAFAAAAAAAAAAAAAgAAAAAAAAA='],
      ['qaApEj66lw==', 'qQBFCiTgA11cAgAABwAAAAAAAAA='],
      ['/aNzzCFPS/A=', '/RjFHJgRgicsAR4ACAAAAAAAAAA='],
    ];
    for (const [input, hash] of vectors) {
      const got = await threaded('quickxor', [Buffer.from(input as string, 'base64')]);
      assert.equal(got.toString('base64'), hash, `input ${input}`);
    }
    // Long enough to wrap the 160-bit register many times, in pieces that split the 160 lanes unevenly.
    const data = randomBytes(50_000);
    const bytewise = new QuickXorHash().update(data).digest();
    assert.equal((await threaded('quickxor', uneven(data))).toString('hex'), bytewise.toString('hex'));
  });

  test('Dropbox’s content hash crosses its 4 MiB blocks as the fake’s reference does', async () => {
    const data = randomBytes(4 * 1024 * 1024 + 1000);
    const pieces = [
      data.subarray(0, 1000),
      data.subarray(1000, 4 * 1024 * 1024 + 7),
      data.subarray(4 * 1024 * 1024 + 7),
    ];
    // The fake's own, written from Dropbox's page on its own (test/fakes/dropbox/state.ts).
    const own = contentHash(data);
    assert.equal((await threaded('dropbox', pieces)).toString('hex'), own);
    const empty = createHash('sha256').digest('hex');
    assert.equal(
      (await threaded('dropbox', [])).toString('hex'),
      empty,
      'no block at all: the hash of nothing',
    );
  });
});

describe('the hashing thread', () => {
  /** The nice value of each of this process's threads, by thread id (Linux: /proc/self/task). */
  function niceValues(): Map<number, number> {
    return new Map(
      readdirSync('/proc/self/task').map((tid) => {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        return [Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
      }),
    );
  }

  test('runs at a lower priority than the event loop, which keeps its own', {
    skip: process.platform !== 'linux' && 'thread priorities are read from /proc',
  }, async () => {
    const hash = new ThreadedHash('md5');
    await hash.update(Buffer.from('x'));
    await hash.digest();
    const nice = niceValues();
    const own = os.getPriority();
    assert.equal(nice.get(process.pid), own, 'the main thread keeps the process priority');
    const lowered = Math.max(own, HASH_THREAD_NICE);
    assert.ok(
      [...nice.values()].includes(lowered),
      `a thread at nice ${lowered}: ${[...nice.values()].join(' ')}`,
    );
  });
});
