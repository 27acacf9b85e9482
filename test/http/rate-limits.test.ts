// docs/api.md "Rate limits and caps" through HTTP on both databases: every route that costs takes a
// place in its bucket per workspace; past the limit 429 with Retry-After in the standard shape; a
// request its schema refuses does not count; another workspace is not affected; two processes on one
// database share the count; a place frees up a minute after it was taken. Then the caps on locations,
// keys, webhooks and open share links: 409 naming the cap at N+1 and not before, room again once one
// goes, and creations at once through two processes stop exactly at the cap. Small limits by settings.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig, RATE_BUCKETS } from '../../src/config.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { type Call, createLocation, newWorkspace, s3Client, seedBucket } from '../support/transfers.js';

const LIMIT = 2;
const HOOK = 'http://127.0.0.1:9/hook';

/** Every bucket at LIMIT a minute. */
const SMALL_LIMITS = Object.fromEntries(
  RATE_BUCKETS.map((bucket) => [`FERRY_RATE_${bucket.toUpperCase()}_PER_MINUTE`, String(LIMIT)]),
);

function assertLimited(res: LightMyRequestResponse, what: string): void {
  assert.equal(res.statusCode, 429, `${what}: ${res.body}`);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], what);
  assert.equal(body.error, 429, what);
  assert.match(body.message, new RegExp(`at most ${LIMIT} `), what);
  const wait = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 60, `${what}: Retry-After ${wait}`);
}

await eachDatabase('rate limits', (database) => {
  const clock = new ManualClock(Date.now());
  let t: TestApp;
  let second: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let bucket: string;

  before(async () => {
    s3 = await startS3rver();
    client = s3Client(s3.endpoint);
    bucket = await seedBucket(client, { 'a.txt': 'a', 'b.txt': 'b' });
    const env = {
      ...SMALL_LIMITS,
      FERRY_EGRESS_ALLOW: '127.0.0.1/32',
      // Send is accepted without a mail server: the dispatcher runs in a worker, and there is none here.
      FERRY_SMTP_URL: 'smtp://127.0.0.1:9',
    };
    t = await startTestApp(database, { clock, env });
    second = await startTestApp(database, { clock, env, shareWith: t });
  });
  after(async () => {
    await second.close();
    await t.close();
    client.destroy();
    await s3.close();
  });

  /** A workspace with its key and an s3 location on s3rver (creating it takes a place in `locations`). */
  async function workspace(): Promise<{ call: Call; id: string; token: string }> {
    const { id: workspaceId } = await ensureWorkspace(t.services.db.kysely, unique('ws'), clock);
    const { token } = await t.services.apiKeys.create(workspaceId, { name: 'test' });
    const call: Call = (options) => t.request({ ...options, token });
    const { id } = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
      metadata: { endpoint: s3.endpoint },
    });
    return { call, id, token };
  }

  interface Route {
    bucket: string;
    /** Requests that are accepted while there is room (each a fresh one). */
    accepted: (n: number) => InjectOptions;
    status: number;
    /** A request its schema refuses. */
    invalid: InjectOptions;
  }

  const routes = (id: string, made: string[]): Route[] => [
    {
      bucket: 'list',
      accepted: () => ({ method: 'POST', url: '/v1/list', payload: { id, path: bucket } }),
      status: 200,
      invalid: { method: 'POST', url: '/v1/list', payload: { id, path: bucket, recursive: true } },
    },
    {
      bucket: 'preview',
      accepted: () => ({
        method: 'POST',
        url: '/remove/preview',
        payload: { path: `${id}/${bucket}/*.txt` },
      }),
      status: 200,
      invalid: { method: 'POST', url: '/remove/preview', payload: { paths: `${id}/${bucket}/a.txt` } },
    },
    {
      bucket: 'transfer',
      accepted: (n) =>
        n === 0
          ? {
              method: 'POST',
              url: '/move',
              payload: { from: `${id}/${bucket}/a.txt`, to: `${id}/${bucket}/c.txt` },
            }
          : { method: 'POST', url: '/remove', payload: { path: `${id}/${bucket}/b.txt` } },
      status: 202,
      invalid: { method: 'POST', url: '/pull', payload: { from: 'http://127.0.0.1:9/x', to: 3 } },
    },
    {
      bucket: 'share',
      accepted: () => ({ method: 'POST', url: '/share', payload: { file: `${id}/${bucket}/a.txt` } }),
      status: 201,
      invalid: { method: 'POST', url: '/share', payload: { file: `${id}/${bucket}/a.txt`, passwrd: 'x' } },
    },
    {
      bucket: 'send',
      accepted: () => ({
        method: 'POST',
        url: '/send',
        payload: { source: `${id}/${bucket}/a.txt`, to: 'ann@example.com' },
      }),
      status: 202,
      invalid: { method: 'POST', url: '/send', payload: { source: `${id}/${bucket}/a.txt` } },
    },
    {
      bucket: 'tokens',
      accepted: (n) =>
        n === 0
          ? { method: 'POST', url: '/v1/tokens', payload: { name: 'ci' } }
          : { method: 'PATCH', url: `/v1/tokens/${made[0]}`, payload: { name: 'ci-2' } },
      status: 0,
      invalid: { method: 'POST', url: '/v1/tokens', payload: { name: 'ci', scope: 'all' } },
    },
    {
      bucket: 'locations',
      accepted: (n) =>
        n === 0
          ? { method: 'PATCH', url: '/v1/locations', payload: { id, label: 'renamed' } }
          : { method: 'POST', url: '/v1/locations/refresh', payload: { id } },
      status: 0,
      invalid: { method: 'PATCH', url: '/v1/locations', payload: { id, label: 'x', colour: 'red' } },
    },
    {
      bucket: 'webhooks',
      accepted: () => ({
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: HOOK, events: ['job.complete'] },
      }),
      status: 201,
      invalid: { method: 'POST', url: '/v1/webhooks', payload: { url: HOOK } },
    },
  ];

  test('each route that costs: the limit is accepted, the next is 429 with Retry-After; schema-invalid requests do not count; other workspaces are not affected', async () => {
    for (const bucketName of [
      'list',
      'preview',
      'transfer',
      'share',
      'send',
      'tokens',
      'locations',
      'webhooks',
    ]) {
      // The locations bucket: the workspace's location is made before its own clock minute starts.
      clock.advance(60_001);
      const { call, id } = await workspace();
      clock.advance(60_001);
      const made: string[] = [];
      const route = routes(id, made).find((r) => r.bucket === bucketName);
      assert.ok(route);
      for (let i = 0; i < 5; i++) {
        const invalid = await call(route.invalid);
        assert.equal(invalid.statusCode, 400, `${bucketName} invalid: ${invalid.body}`);
      }
      for (let n = 0; n < LIMIT; n++) {
        const res = await call(route.accepted(n));
        assert.ok(res.statusCode < 300, `${bucketName} ${n}: ${res.statusCode} ${res.body}`);
        if (route.status !== 0) assert.equal(res.statusCode, route.status, `${bucketName} ${n}`);
        if (bucketName === 'tokens' && n === 0) made.push(res.json().id);
      }
      assertLimited(await call(route.accepted(LIMIT)), bucketName);
      // Schema-invalid requests are still 400, not 429: the schema comes first.
      assert.equal((await call(route.invalid)).statusCode, 400, `${bucketName} invalid after the limit`);
      const other = await workspace();
      const theirs = routes(other.id, []).find((r) => r.bucket === bucketName);
      assert.ok(theirs);
      const elsewhere = await other.call(theirs.accepted(0));
      assert.ok(elsewhere.statusCode < 300, `another workspace: ${elsewhere.statusCode} ${elsewhere.body}`);
    }
  });

  test('/openapi.json lists the 429 on every limited route', async () => {
    const spec = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    for (const [path, method] of [
      ['/v1/list', 'post'],
      ['/remove/preview', 'post'],
      ['/pull', 'post'],
      ['/move', 'post'],
      ['/remove', 'post'],
      ['/share', 'post'],
      ['/send', 'post'],
      ['/v1/tokens', 'post'],
      ['/v1/tokens/{id}', 'patch'],
      ['/v1/locations', 'delete'],
      ['/v1/locations/refresh', 'post'],
      ['/v1/buckets', 'post'],
      ['/v1/webhooks/{id}', 'delete'],
    ] as const) {
      assert.ok(spec.paths[path]?.[method]?.responses?.['429'], `${method} ${path}`);
    }
    assert.equal(spec.paths['/v1/locations/get'].post.responses['429'], undefined, 'a read is not limited');
  });

  test('pull, move and remove share one bucket; a place frees up a minute after it was taken', async () => {
    const { call, id } = await workspace();
    const pull = () =>
      call({
        method: 'POST',
        url: '/pull',
        payload: { from: 'http://127.0.0.1:9/x.txt', to: `${id}/${bucket}/x.txt` },
      });
    assert.equal((await pull()).statusCode, 200);
    clock.advance(30_000);
    assert.equal(
      (await call({ method: 'POST', url: '/remove', payload: { path: `${id}/${bucket}/nothing.txt` } }))
        .statusCode,
      202,
    );
    const limited = await call({
      method: 'POST',
      url: '/move',
      payload: { from: `${id}/${bucket}/a.txt`, to: `${id}/${bucket}/z.txt` },
    });
    assertLimited(limited, 'move after pull and remove');
    assert.equal(limited.headers['retry-after'], '30', 'the first place frees up in 30 s');
    clock.advance(30_001);
    assert.equal((await pull()).statusCode, 200, 'the first place has freed up');
    assertLimited(await pull(), 'the second place is still taken');
  });

  test('two processes on one database share the limit', async () => {
    const { id, token } = await workspace();
    const list = (app: TestApp) =>
      app.request({ method: 'POST', url: '/v1/list', payload: { id, path: bucket }, token });
    assert.equal((await list(t)).statusCode, 200);
    assert.equal((await list(second)).statusCode, 200);
    assertLimited(await list(t), 'the first process, after one list in each');
    assertLimited(await list(second), 'the second process');
  });

  test('requests at once through two processes take exactly the limit', async () => {
    const { token } = await workspace();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? t : second).request({
          method: 'POST',
          url: '/v1/tokens',
          payload: { name: `k${i}` },
          token,
        }),
      ),
    );
    const codes = answers.map((a) => a.statusCode).sort();
    assert.deepEqual(codes, [201, 201, 429, 429, 429, 429, 429, 429, 429, 429]);
  });
});

await eachDatabase('caps', (database) => {
  const clock = new ManualClock(Date.now());
  let t: TestApp;
  let second: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let bucket: string;

  before(async () => {
    s3 = await startS3rver();
    client = s3Client(s3.endpoint);
    bucket = await seedBucket(client, { 'a.txt': 'a' });
    const env = {
      FERRY_MAX_LOCATIONS: '3',
      FERRY_MAX_KEYS: '3',
      FERRY_MAX_WEBHOOKS: '3',
      FERRY_MAX_OPEN_SHARES: '3',
      FERRY_EGRESS_ALLOW: '127.0.0.1/32',
      FERRY_SMTP_URL: 'smtp://127.0.0.1:9',
    };
    t = await startTestApp(database, { clock, env });
    second = await startTestApp(database, { clock, env, shareWith: t });
  });
  after(async () => {
    await second.close();
    await t.close();
    client.destroy();
    await s3.close();
  });

  const s3Location = (label?: string) => ({
    provider: 's3',
    label: label ?? `s3-${Math.random().toString(36).slice(2)}`,
    secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
    metadata: { endpoint: s3.endpoint },
  });

  function assertCapped(res: LightMyRequestResponse, pattern: RegExp): void {
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().error, 409);
    assert.match(res.json().message, pattern);
  }

  test('locations: the cap is accepted, the next is 409 naming it; deleting one makes room', async () => {
    const call = await newWorkspace(t);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call({ method: 'POST', url: '/v1/locations', payload: s3Location() });
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().id);
    }
    const over = await call({ method: 'POST', url: '/v1/locations', payload: s3Location() });
    assertCapped(over, /at most 3 locations \(FERRY_MAX_LOCATIONS\)/);
    const other = await newWorkspace(t);
    assert.equal(
      (await other({ method: 'POST', url: '/v1/locations', payload: s3Location() })).statusCode,
      201,
      'another workspace has its own cap',
    );
    assert.equal(
      (await call({ method: 'DELETE', url: '/v1/locations', payload: { id: ids[0] } })).statusCode,
      204,
    );
    assert.equal(
      (await call({ method: 'POST', url: '/v1/locations', payload: s3Location() })).statusCode,
      201,
    );
  });

  test('locations created at once through two processes stop exactly at the cap', async () => {
    const call = await newWorkspace(t);
    const key = await call({ method: 'POST', url: '/v1/tokens', payload: { name: 'second' } });
    const token = key.json().token as string;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (i % 2 === 0 ? t : second).request({
          method: 'POST',
          url: '/v1/locations',
          payload: s3Location(),
          token,
        }),
      ),
    );
    const codes = answers.map((a) => a.statusCode);
    assert.equal(codes.filter((c) => c === 201).length, 3, codes.join(','));
    assert.equal(codes.filter((c) => c === 409).length, 27, codes.join(','));
  });

  test('API keys: revoked ones do not count', async () => {
    const call = await newWorkspace(t); // its own key is the first
    const made: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await call({ method: 'POST', url: '/v1/tokens', payload: { name: `k${i}` } });
      assert.equal(res.statusCode, 201, res.body);
      made.push(res.json().id);
    }
    assertCapped(
      await call({ method: 'POST', url: '/v1/tokens', payload: { name: 'one too many' } }),
      /at most 3 API keys \(FERRY_MAX_KEYS\)/,
    );
    assert.equal((await call({ method: 'DELETE', url: `/v1/tokens/${made[0]}` })).statusCode, 204);
    assert.equal(
      (await call({ method: 'POST', url: '/v1/tokens', payload: { name: 'after a revoke' } })).statusCode,
      201,
    );
  });

  test('webhooks: the cap is accepted, the next is 409 naming it', async () => {
    const call = await newWorkspace(t);
    for (let i = 0; i < 3; i++) {
      const res = await call({
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: `${HOOK}/${i}`, events: ['job.complete'] },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    assertCapped(
      await call({ method: 'POST', url: '/v1/webhooks', payload: { url: HOOK, events: ['job.complete'] } }),
      /at most 3 webhooks \(FERRY_MAX_WEBHOOKS\)/,
    );
  });

  test('open share links: the cap is accepted, the next share and send are 409; revoked and expired links make room', async () => {
    const call = await newWorkspace(t);
    const { id } = await createLocation(call, s3Location());
    const file = `${id}/${bucket}/a.txt`;
    const shared: string[] = [];
    for (let i = 0; i < 3; i++) {
      const payload = i === 0 ? { file, expires_at: new Date(clock.now() + 60_000).toISOString() } : { file };
      const res = await call({ method: 'POST', url: '/share', payload });
      assert.equal(res.statusCode, 201, res.body);
      shared.push(res.json().id);
    }
    const pattern = /at most 3 open share links \(FERRY_MAX_OPEN_SHARES\)/;
    assertCapped(await call({ method: 'POST', url: '/share', payload: { file } }), pattern);
    assertCapped(
      await call({ method: 'POST', url: '/send', payload: { source: file, to: 'ann@example.com' } }),
      pattern,
    );
    clock.advance(60_001);
    assert.equal(
      (await call({ method: 'POST', url: '/share', payload: { file } })).statusCode,
      201,
      'the expired link no longer counts',
    );
    assertCapped(await call({ method: 'POST', url: '/share', payload: { file } }), pattern);
    assert.equal((await call({ method: 'DELETE', url: `/v1/shares/${shared[1]}` })).statusCode, 204);
    assert.equal(
      (await call({ method: 'POST', url: '/send', payload: { source: file, to: 'ann@example.com' } }))
        .statusCode,
      202,
      'a revoked link no longer counts',
    );
  });
});

test('the settings: each bucket and cap is read from its variable; a bad value is refused at start', () => {
  const config = loadConfig({
    FERRY_RATE_LIST_PER_MINUTE: '7',
    FERRY_RATE_WEBHOOKS_PER_MINUTE: '9',
    FERRY_MAX_OPEN_SHARES: '11',
    FERRY_SHARE_GUESSES_PER_LINK_MAX: '40',
  });
  assert.equal(config.rateLimits.perMinute.list, 7);
  assert.equal(config.rateLimits.perMinute.webhooks, 9);
  assert.equal(config.rateLimits.perMinute.copy, 30, 'the copy limit stays 30 (docs/api.md, "Copy")');
  assert.equal(config.rateLimits.caps.openShares, 11);
  assert.deepEqual(config.rateLimits.shareGuesses, { perAddress: 5, perLink: 20, perLinkMax: 40 });
  assert.throws(() => loadConfig({ FERRY_RATE_SHARE_PER_MINUTE: '0' }), /FERRY_RATE_SHARE_PER_MINUTE/);
  assert.throws(() => loadConfig({ FERRY_MAX_KEYS: 'many' }), /FERRY_MAX_KEYS/);
  assert.throws(
    () => loadConfig({ FERRY_SHARE_GUESSES_PER_LINK_MAX: '10' }),
    /FERRY_SHARE_GUESSES_PER_LINK_MAX must be at least/,
  );
});
