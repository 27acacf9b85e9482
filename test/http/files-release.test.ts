// docs/api.md "Files through ferry": every way out of an upload or a download through ferry gives back
// what it took (src/domain/files.ts): the store it opened is closed, and the transfer memory its parts
// took is free again, whether it was stored or served, refused before a byte (413, 404, 400, HEAD,
// 416), refused by the store, stalled (408), cut by the client or ended by its key. Over real sockets,
// on both databases, against s3rver; the stores are counted by wrapping the app's Storage.open. What
// waits for room in the transfer memory is test/http/memory-budget.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, test } from 'node:test';
import type { TestApp } from '../support/app.js';
import { type FilesApp, startFilesApp } from '../support/files-app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { RawConnection } from '../support/raw-http.js';
import { waitUntil } from '../support/wait.js';

const MiB = 1024 * 1024;

await eachDatabase('every way out of a file through ferry gives back what it took', (database) => {
  let t: TestApp;
  let port: number;
  let base: string;
  let bucket: string;
  let label: string;
  let app: FilesApp;
  /** The stores opened since the test began, and which of them were closed. */
  let opened: { closed: boolean }[] = [];

  before(async () => {
    // A stall is stopped after 1 s without a byte.
    app = await startFilesApp(database, { FERRY_HTTP_BODY_TIMEOUT_SECONDS: '1' }, { 'seeded.txt': 'seeded' });
    ({ t, port, base, bucket, label } = app);
    const storage = t.services.storage;
    const open = storage.open.bind(storage);
    storage.open = (row) => {
      const store = open(row);
      const counted = { closed: false };
      opened.push(counted);
      return {
        ...store,
        close: () => {
          counted.closed = true;
          return store.close();
        },
      };
    };
    const put = await fetch(`${base}/v1/files/${encodeURIComponent(label)}/${bucket}/big.bin`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${t.token}` },
      body: randomBytes(32 * MiB),
    });
    assert.equal(put.status, 201, await put.text());
  });
  after(async () => {
    await app?.close();
  });
  beforeEach(() => {
    opened = [];
  });

  /** Waits until each store opened was closed and no part holds transfer memory; `least` were opened. */
  const allGivenBack = async (least: number) => {
    const memory = t.services.stores.memory;
    assert.ok(memory);
    await waitUntil(() => opened.every((store) => store.closed) && memory.used === 0, {
      what: 'every store closed and the transfer memory free',
      detail: () => `${opened.filter((s) => !s.closed).length} of ${opened.length} open, ${memory.used} held`,
    });
    assert.ok(opened.length >= least, `${opened.length} stores opened, ${least} expected at least`);
  };
  const head = (method: string, path: string, headers: string, token = t.token) =>
    `${method} /v1/files/${encodeURIComponent(label)}/${path} HTTP/1.1\r\nHost: x\r\n` +
    `Authorization: Bearer ${token}\r\n${headers}\r\n`;
  const file = (path: string) => `${base}/v1/files/${encodeURIComponent(label)}/${bucket}/${path}`;
  const auth = () => ({ authorization: `Bearer ${t.token}` });
  const doomedKey = async () => {
    const workspaceId = (await t.services.apiKeys.authenticate(t.token)).workspaceId;
    return t.services.apiKeys.create(workspaceId, { name: unique('doomed') });
  };
  const bytesIn = async () => {
    const text = (await t.request({ method: 'GET', url: '/metrics' })).body;
    return Number(/ferry_file_bytes_total\{direction="in"\} (\d+)/.exec(text)?.[1] ?? 0);
  };

  test('an upload stored (201) and one refused from its Content-Length (413) close their store', async () => {
    const stored = await fetch(file('stored.bin'), {
      method: 'PUT',
      headers: auth(),
      body: randomBytes(MiB),
    });
    assert.equal(stored.status, 201, await stored.text());
    const connection = new RawConnection(port);
    connection.write(head('PUT', `${bucket}/huge.bin`, `Content-Length: ${2 ** 52}\r\n`));
    const answer = await connection.answer();
    connection.close();
    assert.equal(answer?.status, 413, answer?.body);
    await allGivenBack(2);
  });

  test('an upload the store refuses after its first part was read (404) closes its store', async () => {
    const connection = new RawConnection(port);
    connection.write(
      head('PUT', `${unique('nobucket').toLowerCase()}/x.bin`, `Content-Length: ${9 * MiB}\r\n`),
    );
    connection.socket.write(randomBytes(9 * MiB));
    const answer = await connection.answer();
    connection.close();
    assert.equal(answer?.status, 404, answer?.body);
    await allGivenBack(1);
  });

  test('an upload that stalls (408) closes its store and gives back its part', async () => {
    const connection = new RawConnection(port);
    connection.write(head('PUT', `${bucket}/stalled.bin`, `Content-Length: ${9 * MiB}\r\n`));
    connection.socket.write(randomBytes(MiB));
    const answer = await connection.answer(0, 30_000);
    connection.close();
    assert.equal(answer?.status, 408, answer?.body);
    await allGivenBack(1);
  });

  test('an upload whose client goes away mid-body closes its store and gives back its part', async () => {
    const before = await bytesIn();
    const connection = new RawConnection(port);
    connection.write(head('PUT', `${bucket}/abandoned.bin`, `Content-Length: ${9 * MiB}\r\n`));
    connection.socket.write(randomBytes(2 * MiB));
    await waitUntil(async () => (await bytesIn()) > before, { what: 'the upload under way' });
    connection.close();
    await allGivenBack(1);
  });

  test('an upload whose key is revoked mid-body (401) closes its store and gives back its part', async () => {
    const doomed = await doomedKey();
    const before = await bytesIn();
    const connection = new RawConnection(port);
    connection.write(head('PUT', `${bucket}/revoked.bin`, `Content-Length: ${9 * MiB}\r\n`, doomed.token));
    connection.socket.write(randomBytes(2 * MiB));
    // A trickle, so that the 1 s stall deadline is not what stops it (about 160 KiB a second, far short
    // of the length before the test ends).
    const trickle = setInterval(() => connection.write('x'.repeat(16 * 1024)), 100);
    let answer: Awaited<ReturnType<RawConnection['answer']>>;
    try {
      await waitUntil(async () => (await bytesIn()) > before, { what: 'the upload under way' });
      const revoked = await t.request({ method: 'DELETE', url: `/v1/tokens/${doomed.id}` });
      assert.equal(revoked.statusCode, 204, revoked.body);
      answer = await connection.answer();
    } finally {
      clearInterval(trickle);
      connection.close();
    }
    assert.equal(answer?.status, 401, answer?.body);
    await allGivenBack(1);
  });

  test('a download served whole, a HEAD, a range past the end (416), a missing file (404) and a folder (400) close their store', async () => {
    const whole = await fetch(file('seeded.txt'), { headers: auth() });
    assert.equal(await whole.text(), 'seeded');
    const heads = await fetch(file('seeded.txt'), { method: 'HEAD', headers: auth() });
    assert.equal(heads.status, 200);
    const past = await fetch(file('seeded.txt'), { headers: { ...auth(), range: 'bytes=100-' } });
    assert.equal(past.status, 416, await past.text());
    const missing = await fetch(file('missing.txt'), { headers: auth() });
    assert.equal(missing.status, 404, await missing.text());
    await fetch(file('folder/inside.txt'), { method: 'PUT', headers: auth(), body: 'x' });
    const folder = await fetch(file('folder'), { headers: auth() });
    assert.equal(folder.status, 400, await folder.text());
    await allGivenBack(6);
  });

  test('a download whose client goes away, and one whose key is revoked, close their store', async () => {
    // The client reads the first bytes and no more: the rest of the 32 MiB waits on it, so the
    // download is under way, its store open, when the client goes away.
    const connection = new RawConnection(port);
    connection.socket.once('data', () => connection.socket.pause());
    connection.write(head('GET', `${bucket}/big.bin`, ''));
    await waitUntil(() => connection.received.length > 0, { what: 'the download under way' });
    connection.close();
    const doomed = await doomedKey();
    const res = await fetch(file('big.bin'), { headers: { authorization: `Bearer ${doomed.token}` } });
    assert.equal(res.status, 200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    const revoked = await t.request({ method: 'DELETE', url: `/v1/tokens/${doomed.id}` });
    assert.equal(revoked.statusCode, 204, revoked.body);
    await assert.rejects(async () => {
      for (;;) if ((await reader.read()).done) return;
    }, 'the answer is cut short of its length');
    await allGivenBack(2);
  });
});
