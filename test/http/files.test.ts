// docs/api.md "Files through ferry" over real sockets, on both databases, against s3rver: PUT stores
// the body (streamed, its Content-Type kept) and answers the listing entry; GET and HEAD stream it back
// with ranges; location by label or id; the path rules; folders and buckets; the limits (size, a stalled
// body, Node's whole-body deadline that an upload is out of); the key revoked mid-stream; rate limit,
// metrics and /openapi.json. Every store's round trip is test/http/files-stores.test.ts; 1 GiB each way
// with the server's memory measured is test/http/files-large.test.ts.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { FILE_CSP } from '../../src/http/security-headers.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { type FilesApp, startFilesApp } from '../support/files-app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { RawConnection } from '../support/raw-http.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { createLocation, readS3, s3Client, seedBucket } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

const MiB = 1024 * 1024;
/** Node's whole-request deadline is headers + body: 2 s here. */
const HEADERS_SECONDS = 1;
const BODY_SECONDS = 1;

await eachDatabase('files through ferry on s3rver', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let base: string;
  let port: number;
  let bucket: string;
  let label: string;
  let id: string;
  const auth = () => ({ authorization: `Bearer ${t.token}` });
  const url = (location: string, path: string) =>
    `${base}/v1/files/${encodeURIComponent(location)}/${path.split('/').map(encodeURIComponent).join('/')}`;

  let app: FilesApp;
  before(async () => {
    app = await startFilesApp(
      database,
      {
        FERRY_HTTP_HEADERS_TIMEOUT_SECONDS: String(HEADERS_SECONDS),
        FERRY_HTTP_BODY_TIMEOUT_SECONDS: String(BODY_SECONDS),
      },
      { 'docs/seeded.txt': 'seeded by the SDK' },
    );
    ({ t, s3, port, base, bucket, id, label } = app);
  });
  after(async () => {
    await app?.close();
  });

  test('PUT stores the body with its Content-Type and answers 201 with the listing entry', async () => {
    const bytes = randomBytes(300_000);
    const res = await fetch(url(label, `${bucket}/up/report one.bin`), {
      method: 'PUT',
      headers: { ...auth(), 'content-type': 'application/x-report' },
      body: bytes,
    });
    assert.equal(res.status, 201, await res.clone().text());
    const entry = (await res.json()) as Record<string, unknown>;
    assert.deepEqual(
      { ...entry, modTime: undefined },
      {
        name: 'report one.bin',
        path: `${bucket}/up/report one.bin`,
        size: bytes.length,
        isDir: false,
        mimeType: 'application/x-report',
        modTime: undefined,
      },
    );
    assert.match(String(entry.modTime), /^\d{4}-\d\d-\d\dT/);
    const client = s3Client(s3.endpoint);
    assert.deepEqual(await readS3(client, bucket, 'up/report one.bin'), bytes);
    client.destroy();
    // The entry POST /v1/list gives (an S3 listing carries no content type; GET gives it back).
    const list = await t.request({ method: 'POST', url: '/v1/list', payload: { id, path: `${bucket}/up` } });
    const { mimeType: _type, ...listed } = entry;
    assert.deepEqual(list.json().entries, [listed]);
    const get = await fetch(url(label, `${bucket}/up/report one.bin`), { headers: auth() });
    assert.equal(get.headers.get('content-type'), 'application/x-report');
    assert.deepEqual(Buffer.from(await get.arrayBuffer()), bytes);
  });

  test('PUT of a body without Content-Length (chunked) streams it to a multipart upload', async () => {
    const parts = [randomBytes(4 * 1024 * 1024), randomBytes(4 * 1024 * 1024), randomBytes(3 * 1024 * 1024)];
    const res = await fetch(url(id, `${bucket}/up/chunked.bin`), {
      method: 'PUT',
      headers: auth(),
      body: Readable.toWeb(Readable.from(parts)) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    assert.equal(res.status, 201, await res.clone().text());
    const whole = Buffer.concat(parts);
    assert.equal(((await res.json()) as { size: number }).size, whole.length);
    const got = await fetch(url(id, `${bucket}/up/chunked.bin`), { headers: auth() });
    assert.equal(got.status, 200);
    const back = Buffer.from(await got.arrayBuffer());
    assert.equal(
      createHash('sha256').update(back).digest('hex'),
      createHash('sha256').update(whole).digest('hex'),
    );
  });

  test('GET streams the file as an attachment; HEAD gives the same headers and no body', async () => {
    const get = await fetch(url(label, `${bucket}/docs/seeded.txt`), { headers: auth() });
    assert.equal(get.status, 200);
    assert.equal(await get.text(), 'seeded by the SDK');
    assert.equal(get.headers.get('content-length'), '17');
    assert.equal(get.headers.get('accept-ranges'), 'bytes');
    assert.equal(get.headers.get('content-disposition'), 'attachment; filename="seeded.txt"');
    assert.match(get.headers.get('etag') ?? '', /^"[0-9a-f]+"$/);
    const head = await fetch(url(label, `${bucket}/docs/seeded.txt`), { method: 'HEAD', headers: auth() });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), '17');
    assert.equal(head.headers.get('etag'), get.headers.get('etag'));
    assert.equal(await head.text(), '');
  });

  test('a stored HTML or SVG page is served with its type, under a policy that runs nothing and nosniff (GET and HEAD)', async () => {
    for (const [name, type, body] of [
      ['page.html', 'text/html', '<script>alert(document.cookie)</script>'],
      [
        'image.svg',
        'image/svg+xml',
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
      ],
    ] as const) {
      const at = url(label, `${bucket}/pages/${name}`);
      const put = await fetch(at, { method: 'PUT', headers: { ...auth(), 'content-type': type }, body });
      assert.equal(put.status, 201, await put.text());
      for (const method of ['GET', 'HEAD']) {
        const res = await fetch(at, { method, headers: auth() });
        assert.equal(res.status, 200, `${method} ${name}`);
        assert.equal(res.headers.get('content-type'), type, `${method} ${name}`);
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff', `${method} ${name}`);
        // The policy share links have (src/http/security-headers.ts): no script, frame or fetch.
        assert.equal(res.headers.get('content-security-policy'), FILE_CSP, `${method} ${name}`);
        assert.match(FILE_CSP, /default-src 'none'/);
        assert.doesNotMatch(FILE_CSP, /script-src/);
        await res.arrayBuffer();
      }
    }
  });

  test('a name beyond ASCII, with quotes or with `;` is saved whole: an ASCII filename beside the RFC 6266 filename*', async () => {
    for (const [name, ascii] of [
      ['日本語の図面.txt', 'download.txt'],
      ['the "final" cut.txt', "the 'final' cut.txt"],
      ['a;b=c.txt', undefined],
    ] as const) {
      const path = `${bucket}/names/${name}`;
      const put = await fetch(url(label, path), { method: 'PUT', headers: auth(), body: name });
      assert.equal(put.status, 201, await put.clone().text());
      const get = await fetch(url(label, path), { headers: auth() });
      assert.equal(await get.text(), name);
      const star = `filename*=UTF-8''${encodeURIComponent(name).replace(/'/g, '%27')}`;
      assert.equal(
        get.headers.get('content-disposition'),
        ascii === undefined ? `attachment; filename="${name}"` : `attachment; filename="${ascii}"; ${star}`,
        name,
      );
    }
  });

  test('Range answers 206 with the bytes; past the end 416; If-Range with another tag the whole file', async () => {
    const path = `${bucket}/docs/seeded.txt`;
    const part = await fetch(url(label, path), { headers: { ...auth(), range: 'bytes=7-8' } });
    assert.equal(part.status, 206);
    assert.equal(await part.text(), 'by');
    assert.equal(part.headers.get('content-range'), 'bytes 7-8/17');
    const past = await fetch(url(label, path), { headers: { ...auth(), range: 'bytes=100-' } });
    assert.equal(past.status, 416);
    assert.equal(past.headers.get('content-range'), 'bytes */17');
    const stale = await fetch(url(label, path), {
      headers: { ...auth(), range: 'bytes=0-1', 'if-range': '"not-this-version"' },
    });
    assert.equal(stale.status, 200);
    assert.equal(await stale.text(), 'seeded by the SDK');
  });

  test('an unknown file is 404; a bucket or folder is 400 naming it; an empty path 400', async () => {
    const missing = await fetch(url(label, `${bucket}/docs/nope.txt`), { headers: auth() });
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as { message: string }).message, /no file "[^"]+\/docs\/nope.txt"/);
    const folder = await fetch(url(label, `${bucket}/docs`), { headers: auth() });
    assert.equal(folder.status, 400);
    assert.match(((await folder.json()) as { message: string }).message, /is a folder/);
    const root = await fetch(url(label, bucket), { headers: auth() });
    assert.equal(root.status, 400);
    assert.match(((await root.json()) as { message: string }).message, /names a bucket/);
    const onRoot = await fetch(url(label, bucket), { method: 'PUT', headers: auth(), body: 'x' });
    assert.equal(onRoot.status, 400);
    const empty = await fetch(`${base}/v1/files/${encodeURIComponent(label)}/`, {
      method: 'PUT',
      headers: auth(),
      body: 'x',
    });
    assert.equal(empty.status, 400);
    assert.match(((await empty.json()) as { message: string }).message, /names no file/);
  });

  test('the location is a label (a "/" in it as %2F) or an id; unknown 404, a label two locations share 409', async () => {
    const slashed = `team/${unique('l')}`;
    await createLocation((o) => t.request(o), {
      provider: 's3',
      label: slashed,
      secret: { access_key_id: 'AKID', secret_access_key: unique('secret') },
      metadata: { endpoint: s3.endpoint },
    });
    const viaLabel = await fetch(url(slashed, `${bucket}/docs/seeded.txt`), { headers: auth() });
    assert.equal(viaLabel.status, 200);
    assert.equal(await viaLabel.text(), 'seeded by the SDK');
    const viaId = await fetch(url(id, `${bucket}/docs/seeded.txt`), { headers: auth() });
    assert.equal(await viaId.text(), 'seeded by the SDK');
    const unknown = await fetch(url(unique('nobody'), `${bucket}/docs/seeded.txt`), { headers: auth() });
    assert.equal(unknown.status, 404);
    assert.match(((await unknown.json()) as { message: string }).message, /no location is named/);
    const twice = unique('twice');
    for (let i = 0; i < 2; i++) {
      await createLocation((o) => t.request(o), {
        provider: 's3',
        label: twice,
        secret: { access_key_id: 'AKID', secret_access_key: unique('secret') },
        metadata: { endpoint: s3.endpoint },
      });
    }
    const ambiguous = await fetch(url(twice, `${bucket}/docs/seeded.txt`), {
      method: 'PUT',
      headers: auth(),
      body: 'x',
    });
    assert.equal(ambiguous.status, 409);
    assert.equal(((await ambiguous.json()) as { candidates: unknown[] }).candidates.length, 2);
  });

  test('paths are exact bytes: a glob character is a name; ".." segments, NUL and broken encoding are 400', async () => {
    const exact = await fetch(url(label, `${bucket}/exact/[ab]*.txt`), {
      method: 'PUT',
      headers: auth(),
      body: 'star',
    });
    assert.equal(exact.status, 201, await exact.clone().text());
    assert.equal(((await exact.json()) as { path: string }).path, `${bucket}/exact/[ab]*.txt`);
    const client = s3Client(s3.endpoint);
    assert.equal((await readS3(client, bucket, 'exact/[ab]*.txt'))?.toString(), 'star');
    client.destroy();
    const prefix = `/v1/files/${encodeURIComponent(label)}/${bucket}`;
    for (const [path, message] of [
      [`${prefix}/a/%2E%2E/b.txt`, /must not contain a "\.\." segment/],
      [`${prefix}/a/nul%00.txt`, /U\+0000/],
      // Found by the HTTP fuzzer: a NUL in the location reached PostgreSQL (500).
      [`/v1/files/%00/${bucket}/a.txt`, /location must not contain U\+0000/],
      [`${prefix}/a/%ED%A0%80.txt`, /percent-encoded|surrogate/],
      [`${prefix}/a/%E0%A4%A.txt`, /percent-encoded/],
    ] as const) {
      const connection = new RawConnection(port);
      connection.write(
        `PUT ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\nContent-Length: 1\r\n\r\nx`,
      );
      const answer = await connection.answer();
      connection.close();
      assert.equal(answer?.status, 400, `${path}: ${answer?.body}`);
      assert.match(JSON.parse(answer?.body ?? '{}').message, message);
    }
  });

  test("a Content-Length over the store's limit is 413 before a byte of the body is read", async () => {
    const connection = new RawConnection(port);
    connection.write(
      `PUT /v1/files/${encodeURIComponent(label)}/${bucket}/huge.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\nContent-Length: ${2 ** 52}\r\n\r\n`,
    );
    const answer = await connection.answer();
    assert.equal(answer?.status, 413, answer?.body);
    assert.match(JSON.parse(answer?.body ?? '{}').message, /larger than \d+ bytes, the most a file may hold/);
    assert.equal(answer?.headers.connection, 'close');
    await connection.closed;
  });

  test("an upload that keeps coming outlives Node's whole-body deadline; one that stalls is stopped with 408", async () => {
    // The upload keeps coming until a request begun after it has been cut off by the 2 s headers +
    // body deadline of other requests: it has then outlived that deadline, however long it took.
    const bytesIn = async () => {
      const text = (await t.request({ method: 'GET', url: '/metrics' })).body;
      return Number(/ferry_file_bytes_total\{direction="in"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const before = await bytesIn();
    const steady = new RawConnection(port);
    steady.write(
      `PUT /v1/files/${encodeURIComponent(label)}/${bucket}/steady.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const chunk = randomBytes(16 * 1024);
    let sent = 0;
    const send = () => {
      if (!steady.socket.writable) return;
      steady.socket.write(
        Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]),
      );
      sent += chunk.length;
    };
    send();
    // A chunk every 50 ms, a twentieth of the 1 s it may pause; the pace decides nothing else.
    const trickle = setInterval(send, 50);
    let stored: Awaited<ReturnType<RawConnection['answer']>>;
    try {
      // Under way (the server has read some of it) before the other request begins.
      await waitUntil(async () => (await bytesIn()) > before, { what: 'the upload to start' });
      const other = new RawConnection(port);
      other.write(
        `POST /v1/list HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
      );
      const cut = await other.answer();
      other.close();
      assert.equal(cut?.status, 408, `the other request: ${cut?.body}`);
      clearInterval(trickle);
      steady.write('0\r\n\r\n');
      stored = await steady.answer();
    } finally {
      clearInterval(trickle);
      steady.close();
    }
    assert.equal(stored?.status, 201, stored?.body);
    assert.equal(JSON.parse(stored?.body ?? '{}').size, sent);

    const stalled = new RawConnection(port);
    const started = Date.now();
    stalled.write(
      `PUT /v1/files/${encodeURIComponent(label)}/${bucket}/stalled.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\nContent-Length: ${MiB}\r\n\r\n`,
    );
    stalled.socket.write(randomBytes(100_000));
    const answer = await stalled.answer(0, 30_000);
    const took = Date.now() - started;
    assert.equal(answer?.status, 408, answer?.body);
    assert.match(JSON.parse(answer?.body ?? '{}').message, /no byte of the body arrived for 1 s/);
    // The pause bound is the upload's own real-time timer (src/domain/file-bytes.ts), and the stall is
    // for good: the bound here is only for an upload never stopped, with room for a loaded machine.
    assert.ok(took < BODY_SECONDS * 1000 + 10_000, `stopped after ${took} ms`);
    await stalled.closed;
    const gone = await fetch(url(label, `${bucket}/stalled.bin`), { headers: auth() });
    assert.equal(gone.status, 404);
  });

  test('revoking the key ends a download in progress, short of its length', async () => {
    const size = 32 * MiB;
    const put = await fetch(url(label, `${bucket}/big/download.bin`), {
      method: 'PUT',
      headers: auth(),
      body: randomBytes(size),
    });
    assert.equal(put.status, 201);
    const workspaceId = (await t.services.apiKeys.authenticate(t.token)).workspaceId;
    const doomed = await t.services.apiKeys.create(workspaceId, { name: unique('doomed') });
    const res = await fetch(url(label, `${bucket}/big/download.bin`), {
      headers: { authorization: `Bearer ${doomed.token}` },
    });
    assert.equal(res.status, 200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let got = (await reader.read()).value?.length ?? 0;
    const revoked = await t.request({ method: 'DELETE', url: `/v1/tokens/${doomed.id}` });
    assert.equal(revoked.statusCode, 204, revoked.body);
    const since = Date.now();
    const ended = await (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return 'done';
          got += value.length;
        }
      } catch {
        return 'cut';
      }
    })();
    // Cut short of its length is what shows the revocation ended it: the watch ends the answer within a
    // few turns of the event loop, where the rest of the file would take hundreds of reads. The bound
    // is only for an answer that hangs, with room for a loaded machine.
    assert.equal(ended, 'cut');
    assert.ok(got < size, `${got} of ${size} bytes`);
    assert.ok(Date.now() - since < 10_000, `ended ${Date.now() - since} ms after the revocation`);
  });

  test('revoking the key stops an upload in progress with 401 and leaves no file', async () => {
    const workspaceId = (await t.services.apiKeys.authenticate(t.token)).workspaceId;
    const doomed = await t.services.apiKeys.create(workspaceId, { name: unique('doomed') });
    const path = `${bucket}/big/upload.bin`;
    // The bytes the server has taken in (its metric): once they grow, the upload is under way.
    const received = async () => {
      const text = (await t.request({ method: 'GET', url: '/metrics' })).body;
      return Number(/ferry_file_bytes_total\{direction="in"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const before = await received();
    const connection = new RawConnection(port);
    connection.write(
      `PUT /v1/files/${encodeURIComponent(label)}/${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${doomed.token}\r\nContent-Length: ${64 * MiB}\r\n\r\n`,
    );
    // Keep the upload alive until the server answers: a chunk every 50 ms, a twentieth of the 1 s idle
    // timeout.
    const trickle = setInterval(
      () => connection.socket.writable && connection.socket.write(randomBytes(64 * 1024)),
      50,
    );
    try {
      // Under way: the server has read some of the body, so it watches the key (not a fixed sleep).
      await waitUntil(async () => (await received()) > before, { what: 'the upload to start' });
      const revoked = await t.request({ method: 'DELETE', url: `/v1/tokens/${doomed.id}` });
      assert.equal(revoked.statusCode, 204, revoked.body);
      const since = Date.now();
      const answer = await connection.answer(0, 30_000);
      assert.equal(answer?.status, 401, answer?.body);
      assert.equal(JSON.parse(answer?.body ?? '{}').message, 'the API key has been revoked');
      // Unnoticed, the revocation would leave the upload trickling on; the bound is only for that,
      // with room for a loaded machine (the watch answers within a second: src/domain/key-watch.ts).
      assert.ok(Date.now() - since < 10_000, `answered ${Date.now() - since} ms after the revocation`);
    } finally {
      clearInterval(trickle);
      connection.close();
    }
    const gone = await fetch(url(label, path), { headers: auth() });
    assert.equal(gone.status, 404);
  });

  test('/metrics counts the bytes in and out; /openapi.json has PUT, GET and HEAD on /v1/files/{location}/{path}', async () => {
    const metric = async (direction: string) => {
      const text = (await t.request({ method: 'GET', url: '/metrics' })).body;
      const match = new RegExp(`ferry_file_bytes_total\\{direction="${direction}"\\} (\\d+)`).exec(text);
      return Number(match?.[1] ?? 0);
    };
    const [inBefore, outBefore] = [await metric('in'), await metric('out')];
    const put = await fetch(url(label, `${bucket}/metrics.bin`), {
      method: 'PUT',
      headers: auth(),
      body: randomBytes(12_345),
    });
    assert.equal(put.status, 201);
    const get = await fetch(url(label, `${bucket}/metrics.bin`), {
      headers: { ...auth(), range: 'bytes=0-99' },
    });
    assert.equal((await get.arrayBuffer()).byteLength, 100);
    assert.equal((await metric('in')) - inBefore, 12_345);
    await waitUntil(async () => (await metric('out')) - outBefore === 100, {
      what: 'the 100 bytes sent counted',
    });
    const text = (await t.request({ method: 'GET', url: '/metrics' })).body;
    assert.match(text, /ferry_http_requests_total\{method="PUT",route="\/v1\/files\/\*",status="201"\} \d+/);

    const doc = (await t.request({ method: 'GET', url: '/openapi.json', token: null })).json();
    const ops = doc.paths['/v1/files/{location}/{path}'];
    assert.deepEqual(Object.keys(ops).sort(), ['get', 'head', 'put']);
    assert.deepEqual(
      ops.put.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort(),
      ['path:location', 'path:path'],
    );
    assert.ok(ops.put.responses['201'] && ops.put.responses['413'] && ops.put.responses['429']);
    assert.ok(ops.get.responses['206'] && ops.get.responses['416']);
  });
});

await eachDatabase('files through ferry: rate limit', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  before(async () => {
    s3 = await startS3rver();
    t = await startTestApp(database, {
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_RATE_FILES_PER_MINUTE: '3' },
    });
  });
  after(async () => {
    await t?.close();
    await s3?.close();
  });

  test('PUT, GET and HEAD share the files bucket: the fourth in a minute is 429 with Retry-After', async () => {
    const client = s3Client(s3.endpoint);
    const bucket = await seedBucket(client, { 'a.txt': 'a' });
    client.destroy();
    const { label } = await createLocation((o) => t.request(o), {
      provider: 's3',
      secret: { access_key_id: 'AKID', secret_access_key: unique('secret') },
      metadata: { endpoint: s3.endpoint },
    });
    const at = `/v1/files/${encodeURIComponent(label)}/${bucket}/a.txt`;
    assert.equal((await t.request({ method: 'PUT', url: at, payload: 'b' })).statusCode, 201);
    assert.equal((await t.request({ method: 'GET', url: at })).body, 'b');
    assert.equal((await t.request({ method: 'HEAD', url: at })).statusCode, 200);
    const refused = await t.request({ method: 'GET', url: at });
    assert.equal(refused.statusCode, 429, refused.body);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.match(refused.json().message, /file uploads and downloads/);
  });
});
