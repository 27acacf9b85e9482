// docs/api.md "HTTP connections and bodies" and "Errors": the server bounds how long a request may take
// to arrive and how many connections a client holds, refuses a request without a key before reading its
// body, and answers every error it or Node's parser gives in the standard shape. Over real sockets.
import assert from 'node:assert/strict';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { loadConfig } from '../../src/config.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type RawAnswer, RawConnection, rawRequest } from '../support/raw-http.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { waitUntil } from '../support/wait.js';

const HEADERS_SECONDS = 1;
const BODY_SECONDS = 1;
const PER_ADDRESS = 4;
const TOTAL = 6;
/** Room past a deadline for a cut on a loaded machine: whether it is cut at all is what it shows. */
const CUT_WITHIN_MS = 10_000;

function assertStandard(answer: RawAnswer | undefined, status: number): { error: number; message: string } {
  assert.ok(answer, `an answer ${status}, not a closed connection`);
  assert.equal(answer.status, status, answer.body);
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
  const body = JSON.parse(answer.body);
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
  assert.equal(body.error, status);
  assert.equal(typeof body.message, 'string');
  return body;
}

await eachDatabase('HTTP server defences', (database) => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await startTestApp(database, {
      env: {
        FERRY_HTTP_HEADERS_TIMEOUT_SECONDS: String(HEADERS_SECONDS),
        FERRY_HTTP_BODY_TIMEOUT_SECONDS: String(BODY_SECONDS),
        FERRY_HTTP_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
        FERRY_HTTP_MAX_CONNECTIONS: String(TOTAL),
      },
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  after(() => t.close());

  test('the FERRY_HTTP_ settings are what the listening server has', () => {
    const server = t.app.server;
    assert.equal(server.headersTimeout, HEADERS_SECONDS * 1000);
    assert.equal(server.requestTimeout, (HEADERS_SECONDS + BODY_SECONDS) * 1000);
    assert.equal(server.keepAliveTimeout, 65_000);
    assert.equal(server.maxRequestsPerSocket, 1000);
    assert.equal(server.maxConnections, TOTAL);
    assert.equal((server as unknown as { maxHeaderSize: number }).maxHeaderSize, 16 * 1024);
    // Node looks at the two timeouts this often (its default, 30 s, let slow headers live ~90 s): the
    // 408 tests below can only time the cut with room for a loaded machine, this says how late it may be.
    assert.equal(
      (server as unknown as { connectionsCheckingInterval: number }).connectionsCheckingInterval,
      (HEADERS_SECONDS * 1000) / 4,
    );
    const custom = loadConfig({
      FERRY_HTTP_KEEPALIVE_TIMEOUT_SECONDS: '5',
      FERRY_HTTP_MAX_REQUESTS_PER_CONNECTION: '10',
      FERRY_HTTP_MAX_HEADER_BYTES: '32KiB',
      FERRY_HTTP_CONNECTIONS_PER_ADDRESS: '0',
    }).http;
    assert.equal(custom.keepAliveTimeoutMs, 5000);
    assert.equal(custom.maxRequestsPerConnection, 10);
    assert.equal(custom.maxHeaderBytes, 32 * 1024);
    assert.equal(custom.connectionsPerAddress, 0);
    assert.throws(
      () => loadConfig({ FERRY_HTTP_MAX_HEADER_BYTES: '512' }),
      /FERRY_HTTP_MAX_HEADER_BYTES must be a size from 1 KiB to 1 MiB/,
    );
  });

  const get = (path: string, headers = '') =>
    rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`);
  const key = () => `Authorization: Bearer ${t.token}\r\n`;

  test('a client without a key trickling a chunked body is refused at once and its connection closed', async () => {
    // Node reports a request past its deadline through 'clientError' before it closes the connection:
    // the connections it reported, by their client port.
    const timedOut: number[] = [];
    const onClientError = (err: { code?: string }, socket: Socket) => {
      if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') timedOut.push(socket.remotePort ?? 0);
    };
    t.app.server.on('clientError', onClientError);
    const client = new RawConnection(port);
    client.write(
      'POST /v1/list HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n',
    );
    // The pace only keeps the body coming until the server closes the connection; it decides nothing.
    const trickle = setInterval(() => client.write('1\r\n \r\n'), 100);
    try {
      await client.connected();
      const clientPort = client.socket.localPort;
      const answer = await client.answer();
      assertStandard(answer, 401);
      assert.equal(answer?.headers.connection, 'close');
      // Closed by the server while the body is still coming, before the body timeout: a connection left
      // open would be closed at that timeout, which Node reports first (and a 408 would follow the 401).
      await client.closed;
      assert.deepEqual(
        timedOut.filter((p) => p === clientPort),
        [],
        'closed by the 401, not at the body timeout',
      );
      assert.equal(await client.answer(1), undefined, 'nothing after the 401');
    } finally {
      t.app.server.off('clientError', onClientError);
      clearInterval(trickle);
      client.close();
    }
  });

  test('a body that trickles is cut off at the body timeout with 408 and the connection closed', async () => {
    const client = new RawConnection(port);
    const started = Date.now();
    client.write(
      `POST /v1/list HTTP/1.1\r\nHost: x\r\n${key()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n`,
    );
    // The pace only keeps the body coming: it is cut at the deadline however steadily it comes.
    const trickle = setInterval(() => client.write('1\r\n \r\n'), 100);
    try {
      const answer = await client.answer(0, CUT_WITHIN_MS);
      const elapsed = Date.now() - started;
      assertStandard(answer, 408);
      await client.closed;
      // Headers and body together get both timeouts; the check runs every quarter of a second here (the
      // first test reads its interval). The deadline is Node's own timer, which no test clock moves: the
      // bounds are real time, the upper one only for a body never cut, with room for a loaded machine.
      assert.ok(elapsed >= (HEADERS_SECONDS + BODY_SECONDS) * 1000 - 50, `cut after ${elapsed} ms`);
      assert.ok(elapsed < (HEADERS_SECONDS + BODY_SECONDS) * 1000 + CUT_WITHIN_MS, `cut after ${elapsed} ms`);
    } finally {
      clearInterval(trickle);
      client.close();
    }
  });

  test('headers that trickle are cut off at the header timeout with 408', async () => {
    const client = new RawConnection(port);
    const started = Date.now();
    client.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    // As above: the pace only keeps the headers coming, the deadline is Node's real-time one.
    const trickle = setInterval(() => client.write('X-Slow: a\r\n'), 100);
    try {
      const answer = await client.answer(0, CUT_WITHIN_MS);
      const elapsed = Date.now() - started;
      assertStandard(answer, 408);
      await client.closed;
      assert.ok(elapsed >= HEADERS_SECONDS * 1000 - 50, `cut after ${elapsed} ms`);
      assert.ok(elapsed < HEADERS_SECONDS * 1000 + CUT_WITHIN_MS, `cut after ${elapsed} ms`);
    } finally {
      clearInterval(trickle);
      client.close();
    }
  });

  test('one address holds at most its share of connections, and all clients at most the total', async () => {
    const open: RawConnection[] = [];
    const keepAlive = async (localAddress: string) => {
      const connection = new RawConnection(port, { localAddress });
      open.push(connection);
      connection.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      return connection.answer();
    };
    try {
      for (let i = 0; i < PER_ADDRESS; i++) assert.equal((await keepAlive('127.0.0.1'))?.status, 200);
      // The next one from the same address is closed without an answer...
      assert.equal(await keepAlive('127.0.0.1'), undefined);
      // ...while another address is served, up to the total.
      for (let i = PER_ADDRESS; i < TOTAL; i++) assert.equal((await keepAlive('127.0.0.2'))?.status, 200);
      assert.equal(await keepAlive('127.0.0.3'), undefined);
      const refused = await t.request({ method: 'GET', url: '/metrics', token: null });
      assert.match(refused.body, /ferry_http_connections_refused_total\{reason="address"\} 1/);
      assert.match(refused.body, /ferry_http_connections_refused_total\{reason="total"\} 1/);
      // A connection that closes frees its place.
      const first = open[0];
      first?.close();
      await first?.closed;
      await waitUntil(async () => (await keepAlive('127.0.0.1'))?.status === 200, {
        what: 'a place from 127.0.0.1 once one of its connections closed',
      });
    } finally {
      for (const connection of open) connection.close();
      await Promise.all(open.map((c) => c.closed));
      // The server counts the closes as it sees them: wait until it has, for the tests that follow.
      await waitUntil(async () => (await get('/healthz'))?.status === 200, { what: 'the caps freed' });
    }
  });

  test('broken percent-encoding is 400 in the standard shape, after the key check', async () => {
    for (const path of ['/v1/jobs/%ff', '/v1/jobs/abc%', '/v1/locations%', '/v1/jobs/%ED%A0%80']) {
      assertStandard(await get(path), 401);
      const answer = assertStandard(await get(path, key()), 400);
      assert.match(answer.message, /percent-encoded/);
    }
    // A public path needs no key for its answer.
    assertStandard(await get('/s/%ff'), 400);
  });

  test('a path parameter longer than any id is 404 in the standard shape, after the key check', async () => {
    const path = `/v1/jobs/${'a'.repeat(150)}`;
    assertStandard(await get(path), 401);
    const answer = assertStandard(await get(path, key()), 404);
    assert.ok(answer.message.length < 150, answer.message);
    assertStandard(await get(`/s/${'a'.repeat(150)}`), 404);
  });

  test('a URL over the header limit is 414, headers over it 431, both in the standard shape', async () => {
    assertStandard(await get(`/v1/jobs/${'a'.repeat(20_000)}`), 414);
    assertStandard(await get('/healthz', `X-Big: ${'a'.repeat(20_000)}\r\n`), 431);
    assertStandard(await rawRequest(port, 'NOT HTTP\r\n\r\n'), 400);
  });

  test('a body that is not JSON is 415 in the standard shape; an empty one is no body', async () => {
    const post = (headers: string, body: string) =>
      rawRequest(
        port,
        `POST /v1/locations/get HTTP/1.1\r\nHost: x\r\n${key()}${headers}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    const name = JSON.stringify({ name: 'nothing-here' });
    assert.match(
      assertStandard(await post('Content-Type: text/plain\r\n', name), 415).message,
      /text\/plain/,
    );
    assertStandard(await post('', name), 415);
    assertStandard(await post('Content-Type: application/json\r\n', name), 404);
    // No body at all, whatever the content type: the route's own rule (here a missing name) answers.
    assertStandard(await post('Content-Type: text/plain\r\n', ''), 400);
  });
});

await eachDatabase('error messages and bodies', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  before(async () => {
    s3 = await startS3rver();
    t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' } });
  });
  after(async () => {
    await t.close();
    await s3.close();
  });

  test('a lone surrogate in a list path is 400 before it reaches the store (it was a 502)', async () => {
    const bucket = unique('surrogate').toLowerCase();
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'seed', secretAccessKey: 'seed' },
    });
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    client.destroy();
    const created = await t.request({
      method: 'POST',
      url: '/v1/locations',
      payload: {
        provider: 's3',
        label: unique('s3'),
        secret: { access_key_id: 'AKIDFERRY', secret_access_key: unique('secret') },
        metadata: { endpoint: s3.endpoint },
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const list = (path: string) =>
      t.request({
        method: 'POST',
        url: '/v1/list',
        headers: { 'content-type': 'application/json' },
        payload: `{"id":"${created.json().id}","path":"${bucket}/${path}"}`,
      });
    const lone = await list('a\\ud800');
    assert.equal(lone.statusCode, 400, lone.body);
    assert.match(lone.json().message, /surrogate/);
    // A pair is an ordinary character: the empty bucket holds no such folder.
    assert.equal((await list('a\\ud83d\\ude00')).statusCode, 404);
  });

  test('a lone surrogate anywhere in a JSON body is 400; a pair is text like any other', async () => {
    for (const payload of ['{"name":"\\ud800"}', '{"name":"a\\udfffb"}', '{"path":"x","\\ud83d":1}']) {
      const res = await t.request({
        method: 'POST',
        url: '/v1/list',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      assert.equal(res.statusCode, 400, payload);
      assert.deepEqual(res.json(), { error: 400, message: res.json().message });
      assert.match(res.json().message, /surrogate/);
    }
    const pair = await t.request({
      method: 'POST',
      url: '/v1/locations/get',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":"\\ud83d\\ude00"}',
    });
    assert.equal(pair.statusCode, 404);
  });

  test('a message quotes at most a short prefix of a huge value', async () => {
    const huge = 'x'.repeat(500_000);
    // The longest location a path may name (docs/api.md, "Input"): its 404 quotes a prefix of it.
    const missing = await t.request({
      method: 'POST',
      url: '/remove',
      payload: { path: `${'x'.repeat(4000)}/bucket/key` },
    });
    assert.equal(missing.statusCode, 404);
    assert.ok(missing.json().message.length <= 200, missing.json().message.slice(0, 300));
    assert.match(missing.json().message, /x{100}…/);
    const spaced = await t.request({
      method: 'POST',
      url: '/remove',
      payload: { path: `${'ab '.repeat(1300)}/bucket/key` },
    });
    assert.equal(spaced.statusCode, 404);
    assert.ok(spaced.json().message.length <= 401, spaced.json().message.slice(0, 500));
    const unknown = await t.request({
      method: 'POST',
      url: '/v1/locations/get',
      payload: { name: 'n', [huge]: 1 },
    });
    assert.equal(unknown.statusCode, 400);
    assert.ok(unknown.json().message.length <= 200, unknown.json().message.slice(0, 300));
  });
});
