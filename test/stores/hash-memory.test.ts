// The bound on what the hashing thread is handed and has not hashed yet (src/stores/shared/hash-
// thread.ts, HASH_BYTES_IN_FLIGHT): a thread held still, as a starved one is, and a source far faster
// than it. The copies in flight stay within the bound, the stream through ByteCounter waits for the
// thread instead of queueing copies, no byte is dropped, and every way out lets go of what was held.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import { ByteCounter } from '../../src/objects/verify.js';
import {
  HASH_BYTES_IN_FLIGHT,
  holdHashThread,
  SLAB_BYTES,
  ThreadedHash,
} from '../../src/stores/shared/hash-thread.js';
import { waitUntil } from '../support/wait.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');

/**
 * Resolves once in-process work has stopped moving `progress`: a turn of the event loop runs every
 * callback and promise queued before it, so two turns without a change mean that only the thread
 * (held) could move it. The turns only pace the reads; nothing is timed.
 */
async function settled(progress: () => number): Promise<number> {
  let last = -1;
  for (;;) {
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    const now = progress();
    if (now === last) return now;
    last = now;
  }
}

/** A source that gives `data` in chunks of `chunk` bytes as fast as it is read, each a fresh buffer. */
function fastSource(data: Buffer, chunk: number): Readable {
  let at = 0;
  return new Readable({
    read() {
      if (at >= data.length) this.push(null);
      else {
        this.push(Buffer.from(data.subarray(at, at + chunk)));
        at += chunk;
      }
    },
  });
}

test('with the thread held, a hash takes copies up to HASH_BYTES_IN_FLIGHT and later updates wait; released, it hashes every byte in order', async () => {
  const data = randomBytes(32 * MiB);
  const chunk = 64 * KiB;
  const resume = holdHashThread();
  const hash = new ThreadedHash('md5');
  let done = 0;
  let most = 0;
  const updates: Array<Promise<void>> = [];
  try {
    for (let at = 0; at < data.length; at += chunk) {
      const update = hash.update(data.subarray(at, at + chunk));
      most = Math.max(most, hash.bytesInFlight);
      updates.push(
        update.then(() => {
          done += 1;
          most = Math.max(most, hash.bytesInFlight);
        }),
      );
    }
    await settled(() => done);
    assert.equal(hash.bytesInFlight, HASH_BYTES_IN_FLIGHT, 'copies handed over while the thread is held');
    assert.equal(done, HASH_BYTES_IN_FLIGHT / chunk, 'updates settled while the thread is held');
  } finally {
    resume();
  }
  await Promise.all(updates);
  assert.equal((await hash.digest()).toString('hex'), md5(data));
  assert.ok(most <= HASH_BYTES_IN_FLIGHT, `at most ${most} bytes in flight`);
  assert.equal(hash.bytesInFlight, 0);
});

test('an update larger than the bound is handed over in pieces within it', async () => {
  const data = randomBytes(3 * HASH_BYTES_IN_FLIGHT + 5);
  const resume = holdHashThread();
  const hash = new ThreadedHash('sha1');
  let settledUpdate = false;
  const update = hash.update(data).then(() => {
    settledUpdate = true;
  });
  try {
    await settled(() => hash.bytesInFlight);
    assert.equal(hash.bytesInFlight, HASH_BYTES_IN_FLIGHT);
    assert.equal(settledUpdate, false);
  } finally {
    resume();
  }
  await update;
  assert.equal((await hash.digest()).toString('hex'), createHash('sha1').update(data).digest('hex'));
});

test('a stream through ByteCounter waits for a held thread (at most the bound passes) and, released, ends with every byte and the right MD5', async () => {
  const data = randomBytes(48 * MiB);
  let passed = 0;
  const received = createHash('md5');
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      passed += chunk.length;
      received.update(chunk);
      callback();
    },
  });
  const counter = new ByteCounter(data.length, 'read source', undefined, undefined, undefined, {
    md5: md5(data),
  });
  const resume = holdHashThread();
  let copied: Promise<void>;
  try {
    copied = pipeline(fastSource(data, 64 * KiB), counter, sink);
    await waitUntil(() => passed > 0, { what: 'the first bytes through the counter' });
    const stalled = await settled(() => passed);
    // The bound, plus what the streams' own buffers hold between the counter and the sink.
    assert.ok(stalled <= HASH_BYTES_IN_FLIGHT + 128 * KiB, `${stalled} bytes passed a held thread`);
    assert.ok(stalled > 0);
  } finally {
    resume();
  }
  await copied;
  assert.equal(passed, data.length);
  assert.equal(received.digest('hex'), md5(data));
  assert.equal(counter.failure, undefined);
});

test('a copy that ends early (aborted, or its source failing) while updates wait gives back everything: the waiting updates fail, the thread serves others', async () => {
  const data = randomBytes(16 * MiB);
  const resume = holdHashThread();
  const aborter = new AbortController();
  let passed = 0;
  const sink = new PassThrough();
  sink.on('data', (chunk: Buffer) => {
    passed += chunk.length;
  });
  const aborted = pipeline(
    fastSource(data, 64 * KiB),
    new ByteCounter(data.length, 'read source', undefined, undefined, undefined, { md5: md5(data) }),
    sink,
    { signal: aborter.signal },
  );
  const failing = new Readable({ read() {} });
  const broken = pipeline(
    failing,
    new ByteCounter(data.length, 'read source', undefined, undefined, undefined, { md5: md5(data) }),
    new PassThrough().resume(),
  );
  const hash = new ThreadedHash('md5');
  const waiting = [
    hash.update(Buffer.from(data.subarray(0, HASH_BYTES_IN_FLIGHT))),
    hash.update(Buffer.alloc(1)),
  ];
  try {
    await settled(() => passed);
    failing.push(Buffer.from(data.subarray(0, 8 * MiB)));
    await settled(() => passed);
    aborter.abort();
    failing.destroy(new Error('the source broke'));
    hash.discard();
    await assert.rejects(aborted, { name: 'AbortError' });
    await assert.rejects(broken, /the source broke/);
    await waiting[0];
    await assert.rejects(waiting[1] as Promise<void>, /discarded/);
  } finally {
    resume();
  }
  const next = new ThreadedHash('md5');
  await next.update(Buffer.from('hello'));
  assert.equal((await next.digest()).toString('hex'), md5(Buffer.from('hello')));
});

test('hashing leaves no garbage behind: four 128 MiB streams raise the peak RSS by about their bytes in flight, not by what they hashed', async () => {
  const chunk = randomBytes(64 * KiB);
  const streams = 4;
  const each = 128 * MiB;
  const expected = createHash('md5');
  for (let at = 0; at < each; at += chunk.length) expected.update(chunk);
  const warm = new ThreadedHash('md5');
  await warm.update(chunk);
  await warm.digest();
  // The peak (VmHWM) starts again from the RSS of now.
  writeFileSync('/proc/self/clear_refs', '5');
  const before = process.memoryUsage().rss;
  const digests = await Promise.all(
    Array.from({ length: streams }, async () => {
      const hash = new ThreadedHash('md5');
      // The same chunk each time, as update() copies it: the test itself makes no garbage.
      for (let at = 0; at < each; at += chunk.length) await hash.update(chunk);
      return (await hash.digest()).toString('hex');
    }),
  );
  const peak = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * KiB;
  assert.deepEqual(digests, Array(streams).fill(expected.digest('hex')));
  // A fresh copy per chunk handed to the thread was garbage there until its heap was collected: 80 MiB
  // more here. Slabs reused from one pool hold the bytes in flight and the pool itself.
  const bound = streams * HASH_BYTES_IN_FLIGHT + 32 * SLAB_BYTES;
  assert.ok(
    peak - before <= bound,
    `peak RSS rose ${((peak - before) / MiB).toFixed(1)} MiB, more than ${bound / MiB} MiB`,
  );
});
