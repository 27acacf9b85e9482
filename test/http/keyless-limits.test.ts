// What a client without a key can hold of the server, issue 36 (docs/security.md, "Clients without a
// key"; docs/api.md, "Share links" and "HTTP connections and bodies"): a POST to an unknown or revoked
// share link is answered 404 before its body is read and its connection closed; a live link's form
// body has FERRY_HTTP_FORM_TIMEOUT_SECONDS of its own (408); and however many connections clients
// without a key open, from however many addresses, the rest of FERRY_HTTP_MAX_CONNECTIONS is left to
// clients with a key: /healthz and keyed routes answer within a second. Over real sockets, on both
// databases, the shared file on s3rver.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { KeylessConnections } from '../../src/http/keyless-connections.js';
import type { TestApp } from '../support/app.js';
import { type FilesApp, startFilesApp } from '../support/files-app.js';
import { eachDatabase } from '../support/fixtures.js';
import { type RawAnswer, RawConnection, rawRequest } from '../support/raw-http.js';

const TOTAL = 24;
const PER_ADDRESS = 6;
const FORM_SECONDS = 1;

/** Rejects when `promise` has not settled within `ms`: a bound on a wait that would otherwise hang. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('keyless connections: the count', () => {
  const socket = () => ({}) as Socket;

  test('past the limit, the oldest connection of the address holding the most makes room', () => {
    const keyless = new KeylessConnections(4);
    const [a1, a2, a3, b1, c1] = [socket(), socket(), socket(), socket(), socket()];
    assert.equal(keyless.add(a1, 'a'), undefined);
    assert.equal(keyless.add(b1, 'b'), undefined);
    assert.equal(keyless.add(a2, 'a'), undefined);
    assert.equal(keyless.add(a3, 'a'), undefined);
    assert.equal(keyless.add(c1, 'c'), a1, "a holds three: its oldest goes, not b's older one");
    assert.equal(keyless.size, 4);
    keyless.remove(a2); // keyed, or closed
    keyless.remove(a2); // twice is once
    assert.equal(keyless.size, 3);
    const c2 = socket();
    assert.equal(keyless.add(c2, 'c'), undefined);
    // a, b and c hold one, one and two now.
    assert.equal(keyless.add(socket(), 'd'), c1);
    keyless.remove(a3);
    keyless.remove(b1);
    assert.equal(keyless.add(socket(), 'e'), undefined);
    assert.equal(keyless.size, 3);
  });

  test('FERRY_HTTP_KEYLESS_CONNECTIONS is all but an eighth of the total unless set, and at most the total', () => {
    assert.equal(loadConfig({}).http.keylessConnections, 4096 - 512);
    assert.equal(loadConfig({ FERRY_HTTP_MAX_CONNECTIONS: '100' }).http.keylessConnections, 88);
    assert.equal(loadConfig({ FERRY_HTTP_KEYLESS_CONNECTIONS: '10' }).http.keylessConnections, 10);
    assert.throws(
      () => loadConfig({ FERRY_HTTP_MAX_CONNECTIONS: '100', FERRY_HTTP_KEYLESS_CONNECTIONS: '101' }),
      (err: Error) =>
        err instanceof ConfigError && /FERRY_HTTP_KEYLESS_CONNECTIONS must be/.test(err.message),
    );
    assert.equal(loadConfig({}).http.formTimeoutMs, 10_000);
  });
});

await eachDatabase('clients without a key', (database) => {
  let t: TestApp;
  let port: number;
  let label: string;
  let bucket: string;
  const FILE = randomBytes(1000).toString('hex');

  let app: FilesApp;
  before(async () => {
    app = await startFilesApp(
      database,
      {
        FERRY_HTTP_MAX_CONNECTIONS: String(TOTAL),
        FERRY_HTTP_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
        FERRY_HTTP_FORM_TIMEOUT_SECONDS: String(FORM_SECONDS),
      },
      { 'shared.bin': FILE },
    );
    ({ t, port, bucket, label } = app);
  });
  after(async () => {
    await app?.close();
  });

  async function share(payload: Record<string, unknown> = {}): Promise<{ id: string; path: string }> {
    const res = await t.request({
      method: 'POST',
      url: '/share',
      payload: { file: `${label}/${bucket}/shared.bin`, ...payload },
    });
    assert.equal(res.statusCode, 201, res.body);
    return { id: res.json().id, path: new URL(res.json().url).pathname };
  }
  /** A POST of a form to `path` whose chunked body keeps trickling until the connection closes. */
  function trickledForm(path: string, localAddress?: string) {
    const client = new RawConnection(port, localAddress ? { localAddress } : {});
    client.write(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        'Transfer-Encoding: chunked\r\n\r\n1\r\np\r\n',
    );
    const trickle = setInterval(() => client.write('1\r\na\r\n'), 100);
    void client.closed.then(() => clearInterval(trickle));
    return {
      client,
      stop: () => {
        clearInterval(trickle);
        client.close();
      },
    };
  }
  const healthzWithinASecond = async (localAddress?: string) => {
    const started = performance.now();
    const answer = await rawRequest(
      port,
      'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      localAddress ? { localAddress } : {},
    );
    const ms = performance.now() - started;
    assert.equal(answer?.status, 200, `/healthz: ${answer?.body ?? 'no answer (connection closed)'}`);
    assert.ok(ms < 1000, `/healthz answered after ${Math.round(ms)} ms`);
  };
  const keyedWithinASecond = async (localAddress?: string) => {
    const started = performance.now();
    const answer = await rawRequest(
      port,
      `GET /v1/locations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\nConnection: close\r\n\r\n`,
      localAddress ? { localAddress } : {},
    );
    const ms = performance.now() - started;
    assert.equal(
      answer?.status,
      200,
      `GET /v1/locations: ${answer?.body ?? 'no answer (connection closed)'}`,
    );
    assert.ok(ms < 1000, `GET /v1/locations answered after ${Math.round(ms)} ms`);
  };
  const assertPage = (answer: RawAnswer | undefined, status: number) => {
    assert.ok(answer, `an answer ${status}, not a closed connection`);
    assert.equal(answer.status, status, answer.body);
    assert.match(answer.headers['content-type'] ?? '', /^text\/html/);
    assert.equal(answer.headers.connection, 'close');
  };

  test('an unknown or revoked link answers a POST 404 before reading its body, and closes the connection (it read the body)', async () => {
    const revoked = await share();
    assert.equal((await t.request({ method: 'DELETE', url: `/v1/shares/${revoked.id}` })).statusCode, 204);
    for (const path of [`/s/${randomBytes(32).toString('base64url')}`, revoked.path]) {
      const { client, stop } = trickledForm(path);
      try {
        // Bounded: the body never ends, so a server that reads it first never answers.
        assertPage(await client.answer(0, 5000), 404);
        await healthzWithinASecond();
        await within(client.closed, 5000, 'the connection closed while its body still comes');
      } finally {
        stop();
      }
    }
  });

  test(`a live link's form body has ${FORM_SECONDS} s (FERRY_HTTP_FORM_TIMEOUT_SECONDS), then 408 and the connection closed (it had the 60 s of other bodies)`, async () => {
    const locked = await share({ password: 'open sesame' });
    // A body of another type is refused unread (415), its connection closed at once; its deadline,
    // which would fire while the 408 below is awaited, ends with that answer.
    const other = new RawConnection(port);
    other.write(
      `POST ${locked.path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n1\r\np\r\n`,
    );
    const refused = await other.answer();
    assert.equal(refused?.status, 415, refused?.body);
    assert.equal(refused?.headers.connection, 'close');
    await within(other.closed, 5000, 'the refused connection closed');
    const started = performance.now();
    const { client, stop } = trickledForm(locked.path);
    try {
      await healthzWithinASecond();
      const answer = await client.answer(0, 10_000);
      const ms = performance.now() - started;
      assert.equal(answer?.status, 408, answer?.body);
      assert.match(JSON.parse(answer?.body ?? '{}').message, /the form did not arrive within 1 s/);
      assert.equal(answer?.headers.connection, 'close');
      assert.ok(ms >= FORM_SECONDS * 1000 - 50 && ms < FORM_SECONDS * 1000 + 3000, `cut after ${ms} ms`);
      await within(client.closed, 5000, 'the connection closed');
    } finally {
      stop();
    }
    // A form that arrives in time is read as before: the right password gets the file.
    const form = 'password=open+sesame';
    const answer = await rawRequest(
      port,
      `POST ${locked.path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        `Content-Length: ${form.length}\r\nConnection: close\r\n\r\n${form}`,
    );
    assert.equal(answer?.status, 200, answer?.body);
    assert.equal(answer?.body, FILE);
  });

  test('with more connections without a key than the server takes, from many addresses, the rest of the service answers within a second (it reset them)', async () => {
    const live = await share({ password: 'open sesame' });
    const holders: RawConnection[] = [];
    const stops: (() => void)[] = [];
    // Each address holds its whole share, more than every connection in all, in the ways a client
    // without a key holds one longest: headers that never end (20 s) and an idle keep-alive connection
    // after /healthz (65 s); beside them, a live link's form and an unknown link's form that trickle.
    const hold = async (wave: number) => {
      const addresses = [1, 2, 3, 4, 5].map((a) => `127.0.${wave}.${a}`);
      for (const localAddress of addresses) {
        for (let i = 0; i < PER_ADDRESS; i++) {
          const client = new RawConnection(port, { localAddress });
          holders.push(client);
          await client.connected();
          client.write(
            i % 2 === 0 ? 'GET /healthz HTTP/1.1\r\nHost: x\r\n' : 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
          );
        }
      }
      for (const localAddress of addresses) {
        for (const path of [live.path, `/s/${randomBytes(32).toString('base64url')}`]) {
          const { client, stop } = trickledForm(path, localAddress);
          holders.push(client);
          stops.push(stop);
        }
      }
    };
    const refusedKeyless = async () => {
      const text = (await t.request({ method: 'GET', url: '/metrics', token: null })).body;
      return Number(/ferry_http_connections_refused_total\{reason="keyless"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    try {
      await hold(1);
      await healthzWithinASecond('127.0.9.1');
      await keyedWithinASecond('127.0.9.2');
      // And again while a second wave comes.
      await hold(2);
      await keyedWithinASecond('127.0.9.3');
      await healthzWithinASecond('127.0.9.4');
      // The server made room by closing connections without a key, and said so.
      assert.ok((await refusedKeyless()) > 0);
    } finally {
      for (const stop of stops) stop();
      for (const holder of holders) holder.close();
      await Promise.all(holders.map((holder) => holder.closed));
    }
  });
});
