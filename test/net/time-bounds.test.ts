// Time bounds of provider calls (docs/api.md, "Outbound calls"), against node:http servers of our own
// on loopback that answer at once and then stall or trickle: the OAuth stores' client (a JSON answer, an
// error answer and an answer read whole are bounded as a whole; a streamed download only by its longest
// pause), the OAuth token endpoint and the gcs token request. Every stall is a passing failure, well
// before anything that would look like a hang. The bounds are set small here; production ones are
// settings (FERRY_OUTBOUND_…).
//
// The bounds are real timers (undici's and ferry's own), which no test clock moves, so each test is
// built for its outcome not to depend on the machine's pace: what must be cut stalls or trickles for
// good, never for a time just past a bound; and a bound that must not fire is 20 times the trickle's
// pace. undici counts its pause bound in ticks of about half a second, and a pause bound under a
// second can fire after a single stall of the process; at 2 s it takes four ticks with no byte read,
// which a trickle every 100 ms cannot leave. As in production, the pause bound is the longer of the two,
// so it never races the whole-answer bound.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { isFerryError } from '../../src/errors.js';
import { createEgress } from '../../src/net/egress.js';
import { connectionFailure } from '../../src/net/failures.js';
import type { OutboundTimeouts } from '../../src/net/time-bounds.js';
import type { ServiceAccountKey } from '../../src/providers.js';
import { Secret } from '../../src/secret.js';
import { readDropboxError } from '../../src/stores/dropbox/errors.js';
import { ServiceAccountAuth } from '../../src/stores/gcs/auth.js';
import { OAuthHttp, readText } from '../../src/stores/shared/http.js';
import { RefreshFailure, refreshTokens } from '../../src/stores/shared/token-endpoint.js';

const BOUNDS: OutboundTimeouts = { headersMs: 5_000, idleMs: 2_000, answerMs: 800 };
/** The most a cut may take: far below the defaults (30 s and more) that a bound not passed on falls back to. */
const CUT_WITHIN_MS = 20_000;
/** The pace of every trickle: a twentieth of the pause bound. */
const TRICKLE_MS = 100;

let server: http.Server;
let base: string;

/** Answers `status` at once, then sends `first` and a byte every `everyMs` (never, when 0), never ending. */
function stalling(res: http.ServerResponse, status: number, first: string, everyMs: number): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.write(first);
  if (everyMs === 0) return;
  const timer = setInterval(() => res.write(' '), everyMs);
  res.on('close', () => clearInterval(timer));
}

before(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    switch (req.url) {
      case '/stall':
        return stalling(res, 200, '{"entries": [', 0);
      case '/trickle':
        return stalling(res, 200, '{"entries": [', TRICKLE_MS);
      case '/error-stall':
        return stalling(res, 500, '{"error_summary": "', 0);
      case '/error-trickle':
        return stalling(res, 409, '{"error_summary": "', TRICKLE_MS);
      case '/download-trickle': {
        // 30 bytes, one every 100 ms: longer in all than the pause bound and the whole-answer bound,
        // never silent for long.
        res.writeHead(200, { 'content-length': 30 });
        let sent = 0;
        const timer = setInterval(() => {
          res.write('x');
          if (++sent === 30) {
            clearInterval(timer);
            res.end();
          }
        }, TRICKLE_MS);
        res.on('close', () => clearInterval(timer));
        return;
      }
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Resolves with what `run` rejected with and how long it took; fails when it resolves. */
async function failure(run: () => Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const started = performance.now();
  try {
    await run();
  } catch (err) {
    return { err, ms: performance.now() - started };
  }
  assert.fail('expected a failure');
}

function transient(result: { err: unknown; ms: number }, pattern: RegExp, atLeastMs: number): void {
  assert.ok(isFerryError(result.err, 'transient'), String(result.err));
  assert.match(result.err.message, pattern);
  assert.ok(result.ms >= atLeastMs - 50 && result.ms < CUT_WITHIN_MS, `took ${Math.round(result.ms)} ms`);
}

describe('OAuth stores client', () => {
  let client: OAuthHttp;
  before(() => {
    client = new OAuthHttp({
      provider: 'dropbox',
      secret: new Secret({ access_token: 'sl.token', refresh_token: 'r', expiry: '' }),
      readError: readDropboxError,
      egress: createEgress(['127.0.0.1']),
      origins: [base],
      timeouts: BOUNDS,
    });
  });
  after(() => client.close());

  test('a JSON answer whose body stalls fails as transient at the whole-call bound', async () => {
    const result = await failure(() =>
      client.json({ method: 'POST', url: `${base}/stall`, operation: 'files/list_folder' }),
    );
    transient(result, /dropbox: files\/list_folder: no complete answer within 0\.8 s/, BOUNDS.answerMs);
  });

  test('a JSON answer that trickles, never pausing long, is still cut at the whole-call bound', async () => {
    const result = await failure(() =>
      client.json({ method: 'POST', url: `${base}/trickle`, operation: 'files/list_folder' }),
    );
    transient(result, /no complete answer within 0\.8 s/, BOUNDS.answerMs);
  });

  test('an error answer that trickles is cut at the whole-call bound, for send() too', async () => {
    const result = await failure(() =>
      client.send({ method: 'POST', url: `${base}/error-trickle`, operation: 'files/download' }),
    );
    transient(result, /no complete answer within 0\.8 s/, BOUNDS.answerMs);
  });

  test('an error answer that stalls is transient, not the provider error it might have been', async () => {
    const result = await failure(() =>
      client.json({ method: 'POST', url: `${base}/error-stall`, operation: 'files/delete' }),
    );
    transient(result, /no complete answer within/, BOUNDS.answerMs);
  });

  test('an answer of send() read whole with readText() is bounded as a whole', async () => {
    const res = await client.send({ method: 'POST', url: `${base}/trickle`, operation: 'upload session' });
    const result = await failure(() => readText(res.body, Number.POSITIVE_INFINITY));
    transient(result, /dropbox: upload session: no complete answer within 0\.8 s/, BOUNDS.answerMs);
  });

  test('a streamed download that stalls fails as transient after the longest pause', async () => {
    const res = await client.send({ method: 'POST', url: `${base}/stall`, operation: 'files/download' });
    const result = await failure(() => readAll(res.body));
    transient(result, /dropbox: files\/download: the answer stalled \(UND_ERR_BODY_TIMEOUT\)/, BOUNDS.idleMs);
  });

  test('a streamed download that keeps moving is not cut, however long it takes', async () => {
    const res = await client.send({
      method: 'POST',
      url: `${base}/download-trickle`,
      operation: 'files/download',
    });
    const started = performance.now();
    assert.equal((await readAll(res.body)).toString(), 'x'.repeat(30));
    const took = performance.now() - started;
    assert.ok(took > BOUNDS.answerMs, 'it took longer than the whole-answer bound');
    assert.ok(took > BOUNDS.idleMs, 'and longer than the pause bound: that bound is a pause, not a total');
  });
});

test('an OAuth token endpoint that answers 200 and never completes its body is a passing refresh failure', async () => {
  // One bound serves as the pause bound and the whole-request bound here, so the body trickles rather
  // than stalls: the pause bound, 20 times the trickle's pace, cannot fire, and the whole-request bound
  // alone ends it.
  const timeoutMs = BOUNDS.idleMs;
  const started = performance.now();
  await assert.rejects(
    refreshTokens({
      provider: 'dropbox',
      app: { tokenUrl: `${base}/trickle`, apiUrl: base, clientId: 'app' },
      refreshToken: new Secret('refresh-me'),
      timeoutMs,
      now: () => Date.now(),
    }),
    (err: unknown) => {
      assert.ok(err instanceof RefreshFailure, String(err));
      assert.equal(err.failureClass, 'passing');
      assert.match(err.message, /dropbox token endpoint: no complete answer within 2 s/);
      return true;
    },
  );
  const took = performance.now() - started;
  assert.ok(took >= timeoutMs - 50 && took < CUT_WITHIN_MS, `took ${Math.round(took)} ms`);
});

test('a gcs token endpoint that answers 200 and stalls is a transient failure', async () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = {
    type: 'service_account',
    client_email: 'ferry@example.iam.gserviceaccount.com',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    token_uri: `${base}/stall`,
  } as ServiceAccountKey;
  const egress = createEgress(['127.0.0.1/32']);
  const auth = new ServiceAccountAuth({
    key: new Secret(key),
    tokenUri: `${base}/stall`,
    dispatcher: egress.dispatcher,
    agentFor: () => undefined,
    timeouts: BOUNDS,
  });
  const result = await failure(() => auth.getAccessToken());
  transient(result, /gcs: token request: no complete answer within 0\.8 s/, BOUNDS.answerMs);
});

test('a connection failure reads as what happened: undici time bounds in words, other codes as they are', () => {
  const coded = (code: string) => Object.assign(new Error('x'), { code });
  assert.equal(connectionFailure(coded('UND_ERR_BODY_TIMEOUT')), 'the answer stalled (UND_ERR_BODY_TIMEOUT)');
  assert.equal(
    connectionFailure(coded('UND_ERR_HEADERS_TIMEOUT')),
    'no answer in time (UND_ERR_HEADERS_TIMEOUT)',
  );
  assert.equal(connectionFailure(coded('ECONNREFUSED')), 'connection failed (ECONNREFUSED)');
  assert.equal(connectionFailure(new Error('socket hang up')), 'connection failed (socket hang up)');
});
