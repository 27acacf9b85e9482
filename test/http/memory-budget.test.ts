// The transfer memory budget (FERRY_TRANSFER_MEMORY) under uploads through ferry, issue 36 (docs/api.md,
// "Files through ferry"; docs/performance.md, "Memory"): a Content-Length whose parts would not fit in
// the budget, or past 2^53 - 1, is 413 before anything is taken; what an upload takes is given back on
// every way out (error, abort, idle timeout, revocation), and so is its place in line when it waits
// for room (abort, revocation, its idle deadline, the server closing); meanwhile the rest of the
// service answers within a second. Over real sockets, on both databases, against s3rver; what is held
// is read from /metrics (ferry_transfer_memory_bytes and _waiting_parts).
import assert from 'node:assert/strict';
import { constants } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { PartReader, readFirst, uploadParts } from '../../src/stores/shared/chunks.js';
import { largestPart, MemoryBudget } from '../../src/stores/shared/memory.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { type FilesApp, startFilesApp } from '../support/files-app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { RawConnection } from '../support/raw-http.js';
import { waitUntil } from '../support/wait.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const BUDGET = 16 * MiB;
/** s3's part for a body of this size is 8 MiB: its first part takes half the budget before it is read. */
const BODY = 20 * MiB;
/** The length: 10,000 parts of 5 GiB, which s3 allows and the budget cannot hold. */
const S3_LARGEST = 53_687_091_200_000;

describe('a part is bounded before anything is taken or allocated', () => {
  test('readFirst refuses a part larger than the budget (or a Buffer) and takes nothing', async () => {
    const budget = new MemoryBudget(BUDGET);
    assert.equal(largestPart(budget), BUDGET);
    assert.equal(largestPart(new MemoryBudget(BUDGET + 12_345)), BUDGET, 'whole MiB');
    // Node's largest Buffer: 4 GiB on Node 20, 2^53 - 1 bytes on 22 and later (CI's Node 24 met it).
    assert.equal(
      largestPart(undefined),
      Math.floor(constants.MAX_LENGTH / MiB) * MiB,
      "without a budget, Node's largest Buffer",
    );
    const reader = new PartReader(Readable.from([Buffer.from('x')]), S3_LARGEST);
    await assert.rejects(readFirst(reader, 5 * GiB, budget), /more than ferry holds in memory at once/);
    assert.equal(budget.used, 0);
    assert.equal(budget.peak, 0, 'nothing was ever taken');
  });

  test('uploadParts refuses it too, and gives back the first part it was handed', async () => {
    const budget = new MemoryBudget(BUDGET);
    const first = await budget.acquire(MiB);
    let sent = 0;
    await assert.rejects(
      uploadParts({
        reader: new PartReader(Readable.from([Buffer.alloc(10)])),
        partSize: BUDGET + MiB,
        memory: budget,
        first: Buffer.alloc(MiB),
        firstRelease: first,
        uploadPart: async () => {
          sent += 1;
        },
      }),
      /more than ferry holds in memory at once/,
    );
    assert.equal(sent, 0);
    assert.equal(budget.used, 0);
  });

  test('a wait for room ends at its time limit and at its own signal, leaving the line', async () => {
    const budget = new MemoryBudget(10);
    const all = await budget.acquire(10);
    const timed = budget.acquire(5, undefined, { timeoutMs: 50 });
    assert.equal(budget.waiting, 1);
    await assert.rejects(timed, (err: Error & { kind?: string; retryAfterSeconds?: number }) => {
      assert.equal(err.kind, 'unavailable');
      assert.match(err.message, /had no room for this upload for 0.05 s/);
      assert.ok((err.retryAfterSeconds ?? 0) >= 1);
      return true;
    });
    assert.equal(budget.waiting, 0);
    const closing = new AbortController();
    const closed = budget.acquire(5, undefined, { signal: closing.signal });
    closing.abort(new Error('closing'));
    await assert.rejects(closed, /closing/);
    // Once closing, a part that must wait is refused at once; one that fits is still granted.
    await assert.rejects(budget.acquire(5, undefined, { signal: closing.signal }), /closing/);
    assert.equal(budget.waiting, 0);
    all();
    (await budget.acquire(5, undefined, { signal: closing.signal }))();
    assert.equal(budget.used, 0);
  });
});

await eachDatabase('the transfer memory under uploads', (database) => {
  let t: TestApp;
  let port: number;
  let base: string;
  let bucket: string;
  let label: string;

  let app: FilesApp;
  before(async () => {
    app = await startFilesApp(
      database,
      {
        FERRY_TRANSFER_MEMORY: String(BUDGET),
        // An upload is stopped only by the way out each test chooses, never by a stall.
        FERRY_HTTP_BODY_TIMEOUT_SECONDS: '120',
      },
      { 'seeded.txt': 'seeded' },
    );
    ({ t, port, base, bucket, label } = app);
  });
  after(async () => {
    await app?.close();
  });

  const memory = () => memoryOf(t);
  const put = (path: string, length: number | string, token = t.token, where = bucket) =>
    `PUT /v1/files/${encodeURIComponent(label)}/${where}/${path} HTTP/1.1\r\nHost: x\r\n` +
    `Authorization: Bearer ${token}\r\nContent-Length: ${length}\r\n\r\n`;
  const nothingHeld = (what: string) =>
    waitUntil(async () => (await memory()).held === 0 && (await memory()).waiting === 0, {
      what,
      detail: async () => JSON.stringify(await memory()),
    });

  test('a Content-Length whose parts would not fit in the budget is 413 before a byte is taken (it was a 500 that kept the whole budget)', async () => {
    const peak = (await memory()).peak;
    const connection = new RawConnection(port);
    connection.write(`${put('huge.bin', S3_LARGEST)}x`);
    const answer = await connection.answer();
    assert.equal(answer?.status, 413, answer?.body);
    // The most: 10,000 parts of the 16 MiB budget.
    assert.match(
      JSON.parse(answer?.body ?? '{}').message,
      new RegExp(`a body of ${S3_LARGEST} bytes is larger than ${10_000 * BUDGET} bytes`),
    );
    assert.equal(answer?.headers.connection, 'close');
    await connection.closed;
    assert.deepEqual(await memory(), { held: 0, waiting: 0, peak }, 'nothing taken, nothing waits');
    // The budget is whole: an upload that needs all of it goes through.
    const body = randomBytes(BODY);
    const res = await fetch(`${base}/v1/files/${encodeURIComponent(label)}/${bucket}/after.bin`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${t.token}` },
      body,
    });
    assert.equal(res.status, 201, await res.text());
    await nothingHeld('the upload after it to give its parts back');
  });

  test('a Content-Length past 2^53 - 1 is 413 at once, not taken for a body of unknown size', async () => {
    for (const length of ['9007199254740993', '54975581388800000', '18446744073709551615']) {
      const connection = new RawConnection(port);
      connection.write(put('past-2-53.bin', length));
      // Before any body: the upload would otherwise wait for it (120 s here).
      const answer = await connection.answer(0, 5000);
      assert.equal(answer?.status, 413, `${length}: ${answer?.body}`);
      assert.match(
        JSON.parse(answer?.body ?? '{}').message,
        /a body of more than 9007199254740991 bytes is larger than \d+ bytes/,
      );
      assert.equal(answer?.headers.connection, 'close');
      await connection.closed;
    }
    assert.equal((await memory()).held, 0);
  });

  test('while those are tried, the rest of the service answers within a second', async () => {
    const tries: Promise<unknown>[] = [];
    const attack = (length: number | string, body: string) =>
      (async () => {
        const connection = new RawConnection(port);
        connection.write(`${put(unique('attack'), length)}${body}`);
        try {
          return (await connection.answer(0, 5000))?.status;
        } finally {
          connection.close();
        }
      })();
    for (let i = 0; i < 5; i++) tries.push(attack(S3_LARGEST, 'x'), attack('9007199254740993', ''));
    const timed = async (what: string, call: () => Promise<Response>, status: number) => {
      const started = performance.now();
      const res = await call();
      const ms = performance.now() - started;
      assert.equal(res.status, status, `${what}: ${await res.text()}`);
      assert.ok(ms < 1000, `${what} answered after ${Math.round(ms)} ms`);
    };
    const auth = { authorization: `Bearer ${t.token}` };
    await timed('/healthz', () => fetch(`${base}/healthz`), 200);
    await timed('GET /v1/locations', () => fetch(`${base}/v1/locations`, { headers: auth }), 200);
    await timed(
      'a small upload',
      () =>
        fetch(`${base}/v1/files/${encodeURIComponent(label)}/${bucket}/small.bin`, {
          method: 'PUT',
          headers: auth,
          body: randomBytes(64 * 1024),
        }),
      201,
    );
    assert.deepEqual(await Promise.all(tries), Array(10).fill(413));
    await nothingHeld('nothing held after the tries');
  });

  describe('what an upload holds is given back on every way out', () => {
    test('error: the store refuses the upload after its first part was read', async () => {
      const connection = new RawConnection(port);
      connection.write(put('error.bin', BODY, t.token, unique('nobucket').toLowerCase()));
      await waitUntil(async () => (await memory()).held === 8 * MiB, { what: 'the first part taken' });
      connection.socket.write(randomBytes(BODY));
      const answer = await connection.answer();
      connection.close();
      assert.equal(answer?.status, 404, answer?.body);
      await nothingHeld('the failed upload to give its part back');
    });

    test('abort: the client goes away in the middle of a part', async () => {
      const connection = new RawConnection(port);
      connection.write(put('abort.bin', BODY));
      connection.socket.write(randomBytes(MiB));
      await waitUntil(async () => (await memory()).held === 8 * MiB, { what: 'the first part taken' });
      connection.close();
      await nothingHeld('the abandoned upload to give its part back');
    });

    test('revocation: the key is revoked in the middle of a part (401)', async () => {
      const workspaceId = (await t.services.apiKeys.authenticate(t.token)).workspaceId;
      const doomed = await t.services.apiKeys.create(workspaceId, { name: unique('doomed') });
      const connection = new RawConnection(port);
      connection.write(put('revoked.bin', BODY, doomed.token));
      connection.socket.write(randomBytes(MiB));
      await waitUntil(async () => (await memory()).held === 8 * MiB, { what: 'the first part taken' });
      const revoked = await t.request({ method: 'DELETE', url: `/v1/tokens/${doomed.id}` });
      assert.equal(revoked.statusCode, 204, revoked.body);
      const answer = await connection.answer();
      connection.close();
      assert.equal(answer?.status, 401, answer?.body);
      await nothingHeld('the revoked upload to give its part back');
    });
  });

  describe('an upload waiting for room leaves the line on every way out', () => {
    /** Holds the whole budget, as other transfers would, until the returned release. */
    const holdAll = async () => {
      const budget = t.services.stores.memory;
      assert.ok(budget);
      return budget.acquire(budget.capacity);
    };
    const waitingUpload = async (token = t.token, sent = MiB) => {
      const connection = new RawConnection(port);
      connection.write(put(unique('waits'), BODY, token));
      connection.socket.write(randomBytes(sent));
      await waitUntil(async () => (await memory()).waiting === 1, { what: 'the upload waiting for room' });
      return connection;
    };

    test('abort: the client goes away while its upload waits', async () => {
      const release = await holdAll();
      try {
        // A few bytes, which the server reads, and then the end: a client gone after more than the
        // server buffers goes unseen while nothing is read, until the idle deadline (the next tests).
        const connection = await waitingUpload(t.token, 1024);
        connection.close();
        await waitUntil(async () => (await memory()).waiting === 0, { what: 'the wait to end' });
        assert.equal((await memory()).held, BUDGET, 'only what the test holds');
      } finally {
        release();
      }
      await nothingHeld('nothing held');
    });

    test('revocation: the key is revoked while its upload waits (401)', async () => {
      const workspaceId = (await t.services.apiKeys.authenticate(t.token)).workspaceId;
      const doomed = await t.services.apiKeys.create(workspaceId, { name: unique('doomed') });
      const release = await holdAll();
      try {
        const connection = await waitingUpload(doomed.token);
        const revoked = await t.request({ method: 'DELETE', url: `/v1/tokens/${doomed.id}` });
        assert.equal(revoked.statusCode, 204, revoked.body);
        const answer = await connection.answer();
        connection.close();
        assert.equal(answer?.status, 401, answer?.body);
        assert.equal((await memory()).waiting, 0);
      } finally {
        release();
      }
      await nothingHeld('nothing held');
    });
  });
});

await eachDatabase('the transfer memory: deadlines and shutdown', (database) => {
  let t: TestApp;
  let port: number;
  let bucket: string;
  let label: string;
  const IDLE_SECONDS = 1;

  let app: FilesApp;
  before(async () => {
    app = await startFilesApp(
      database,
      { FERRY_TRANSFER_MEMORY: String(BUDGET), FERRY_HTTP_BODY_TIMEOUT_SECONDS: String(IDLE_SECONDS) },
      { 'seeded.txt': 'seeded' },
    );
    ({ t, port, bucket, label } = app);
  });
  after(async () => {
    await app?.close();
  });

  const memory = () => memoryOf(t);
  const put = (path: string) =>
    `PUT /v1/files/${encodeURIComponent(label)}/${bucket}/${path} HTTP/1.1\r\nHost: x\r\n` +
    `Authorization: Bearer ${t.token}\r\nContent-Length: ${BODY}\r\n\r\n`;

  test('timeout: a client that stops in the middle of a part is stopped with 408 and its part given back', async () => {
    const connection = new RawConnection(port);
    connection.write(put('stalled.bin'));
    connection.socket.write(randomBytes(MiB));
    const answer = await connection.answer();
    connection.close();
    assert.equal(answer?.status, 408, answer?.body);
    await waitUntil(async () => (await memory()).held === 0, { what: 'the stalled upload to give back' });
  });

  test('timeout: an upload that waits for room past its idle deadline is 503 with Retry-After (it waited for ever)', async () => {
    const budget = t.services.stores.memory;
    assert.ok(budget);
    const release = await budget.acquire(budget.capacity);
    try {
      const connection = new RawConnection(port);
      connection.write(put('waits-too-long.bin'));
      // More than the server buffers: ferry, not the client, is the slow side, so it is no 408.
      connection.socket.write(randomBytes(MiB));
      await waitUntil(async () => (await memory()).waiting === 1, { what: 'the upload waiting for room' });
      const answer = await connection.answer();
      connection.close();
      assert.equal(answer?.status, 503, answer?.body);
      assert.ok(Number(answer?.headers['retry-after']) >= 1, JSON.stringify(answer?.headers));
      assert.match(
        JSON.parse(answer?.body ?? '{}').message,
        /transfer memory \(FERRY_TRANSFER_MEMORY\) had no room for this upload for 1 s/,
      );
      assert.equal((await memory()).waiting, 0);
    } finally {
      release();
    }
    assert.equal((await memory()).held, 0);
  });

  test('shutdown: closing the server ends an upload waiting for room (503) instead of waiting on it', async () => {
    // An app of its own, which the test closes.
    const own = await startTestApp(database, {
      shareWith: t,
      env: {
        FERRY_EGRESS_ALLOW: '127.0.0.1/32',
        FERRY_TRANSFER_MEMORY: String(BUDGET),
        FERRY_HTTP_BODY_TIMEOUT_SECONDS: '120',
      },
    });
    let closing: Promise<void> | undefined;
    let connection: RawConnection | undefined;
    const budget = own.services.stores.memory;
    assert.ok(budget);
    const release = await budget.acquire(budget.capacity);
    try {
      await own.app.listen({ host: '127.0.0.1', port: 0 });
      const ownPort = (own.app.server.address() as AddressInfo).port;
      connection = new RawConnection(ownPort);
      connection.write(put('at-shutdown.bin'));
      connection.socket.write(randomBytes(MiB));
      await waitUntil(() => budget.waiting === 1, { what: 'the upload waiting for room' });
      closing = own.close();
      // Bounded: without its end, the close waits for the upload and the upload for the budget.
      const answer = await connection.answer(0, 5000);
      connection.close();
      assert.equal(answer?.status, 503, answer?.body);
      assert.match(JSON.parse(answer?.body ?? '{}').message, /shutting down/);
      assert.equal(budget.waiting, 0);
      await closing;
    } finally {
      connection?.close();
      release();
      await (closing ?? own.close());
    }
  });
});

/** What the budget holds now, from /metrics. */
async function memoryOf(t: TestApp): Promise<{ held: number; waiting: number; peak: number }> {
  const text = (await t.request({ method: 'GET', url: '/metrics', token: null })).body;
  const read = (name: string) => {
    const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
    assert.ok(match, `${name} in /metrics`);
    return Number(match[1]);
  };
  return {
    held: read('ferry_transfer_memory_bytes'),
    waiting: read('ferry_transfer_memory_waiting_parts'),
    peak: read('ferry_transfer_memory_peak_bytes'),
  };
}
