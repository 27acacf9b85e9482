// gcs against the fake GCS JSON API (test/fakes/gcs), which also serves the key's token_uri. Key
// pairs are generated here with node:crypto; the fake knows only the public half. Rejected
// credentials: a key file with the right e-mail but another private key (invalid_grant).
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { CRC32C } from '@google-cloud/storage';
import { isFerryError } from '../../src/errors.js';
import { createEgress } from '../../src/net/egress.js';
import { OUTBOUND_DEFAULTS } from '../../src/net/time-bounds.js';
import type { ServiceAccountKey } from '../../src/providers.js';
import { Secret } from '../../src/secret.js';
import { DEFAULT_OAUTH_APPS, type StoreContext, type StoreLocation } from '../../src/stores/context.js';
import type { Entry, Store } from '../../src/stores/contract.js';
import { startGateway } from '../../src/stores/gcs/gateway.js';
import { type GcsTuning, open } from '../../src/stores/gcs/index.js';
import { FakeGcs } from '../fakes/gcs/index.js';
import { FAKES_ONLY, ForbiddenServer } from '../support/forbidden-server.js';
import { describeConformance } from './conformance.js';

const PAGE_SIZE = 5;
const TUNING: Partial<GcsTuning> = { pageSize: PAGE_SIZE, chunkSize: 256 * 1024 };
const THROTTLE_SECONDS = 9;
const PROJECT = 'ferry-test';
const EMAIL = 'ferry-store@ferry-test.iam.gserviceaccount.com';

const ctx: StoreContext = { egress: createEgress(['127.0.0.1']), oauthApps: DEFAULT_OAUTH_APPS };

function keyPair(): { privateKey: string; publicKey: string } {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
}

/** A line from the middle of a PEM key: what a leak would show. */
function keyLine(pem: string): string {
  return pem.split('\n')[3] as string;
}

let fake: FakeGcs;
const good = keyPair();
const wrong = keyPair();

function keyFile(privateKey: string, overrides: Partial<ServiceAccountKey> = {}): ServiceAccountKey {
  return {
    type: 'service_account',
    project_id: PROJECT,
    private_key_id: randomBytes(20).toString('hex'),
    private_key: privateKey,
    client_email: EMAIL,
    client_id: '1234567890',
    token_uri: fake.tokenUrl,
    ...overrides,
  };
}

function location(
  key: ServiceAccountKey,
  metadata: Record<string, unknown> = { endpoint: fake.url },
): StoreLocation {
  return {
    id: 'loc-gcs',
    provider: 'gcs',
    metadata,
    secret: new Secret({ service_account_json: key }),
  };
}

async function collect(entries: AsyncIterable<Entry>): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const entry of entries) out.push(entry);
  return out;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function kindOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (err) {
    return isFerryError(err) ? err.kind : `not a FerryError: ${String(err)}`;
  }
}

/** A bearer token the fake issued to the store (the store's calls carry it). */
async function bearerOf(store: Store): Promise<string> {
  // Any call makes the store fetch a token first.
  await store.stat(`ferry-probe-${randomBytes(3).toString('hex')}/x`).catch(() => undefined);
  const token = [...fake.requests]
    .reverse()
    .map((r) => r.headers.authorization)
    .find((a) => typeof a === 'string' && a.startsWith('Bearer '));
  assert.ok(token, 'the store sent a bearer token');
  return token;
}

/** Creates a bucket through the fake's buckets.insert. */
async function newBucket(store: Store): Promise<string> {
  const name = `ferry-${randomBytes(6).toString('hex')}`;
  const res = await fetch(`${fake.url}/storage/v1/b?project=${PROJECT}`, {
    method: 'POST',
    headers: { authorization: await bearerOf(store), 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  assert.equal(res.status, 200, await res.text());
  return name;
}

before(async () => {
  fake = await FakeGcs.start({ pageSize: PAGE_SIZE, rewriteChunk: 7 });
  fake.oauth.addAccount(EMAIL, good.publicKey);
});

after(async () => {
  await fake?.close();
});

describeConformance('gcs', async () => {
  const opened: Store[] = [];
  const store = open(location(keyFile(good.privateKey)), ctx, TUNING);
  const base = await newBucket(store);
  return {
    store,
    base,
    pageSize: PAGE_SIZE,
    async rejectedStore() {
      const bad = open(location(keyFile(wrong.privateKey)), ctx, TUNING);
      opened.push(bad);
      return bad;
    },
    throttleNext(count) {
      fake.throttleNext(count, { status: 429, retryAfter: THROTTLE_SECONDS });
    },
    throttleRetryAfterSeconds: THROTTLE_SECONDS,
    async makeFolder(path) {
      const slash = path.indexOf('/');
      fake.state.put(
        path.slice(0, slash),
        `${path.slice(slash + 1)}/`,
        Buffer.alloc(0),
        'application/x-directory',
      );
    },
    secretValues: [keyLine(good.privateKey), keyLine(wrong.privateKey)],
    async close() {
      for (const s of opened) await s.close();
      await store.close();
    },
  };
});

describe('gcs specifics', () => {
  let store: Store;
  let bucket: string;

  before(async () => {
    store = open(location(keyFile(good.privateKey)), ctx, TUNING);
    bucket = await newBucket(store);
  });

  after(async () => {
    await store.close();
  });

  test('the account is the service account on its endpoint', () => {
    assert.equal(store.account, `gcs:${EMAIL}@${fake.url}`);
    const google = open(location(keyFile(good.privateKey), {}), ctx);
    assert.equal(google.account, `gcs:${EMAIL}@https://storage.googleapis.com`);
  });

  test('the token comes from the key file token_uri, with the assertion audience set to it', async () => {
    const before = fake.oauth.requests;
    const fresh = open(location(keyFile(good.privateKey)), ctx, TUNING);
    try {
      await fresh.write(`${bucket}/token/a.txt`, Readable.from([Buffer.from('a')]), { size: 1 });
      await fresh.stat(`${bucket}/token/a.txt`);
      assert.equal(fake.oauth.requests - before, 1, 'one token for several calls');
    } finally {
      await fresh.close();
    }
  });

  test('a token_uri that refuses the key fails every call as credentials_rejected, keeping its words', async () => {
    const bad = open(location(keyFile(wrong.privateKey)), ctx, TUNING);
    try {
      await assert.rejects(bad.stat(`${bucket}/x`), (err) => {
        assert.ok(isFerryError(err, 'credentials_rejected'), String(err));
        assert.match((err as Error).message, /invalid_grant: Invalid JWT Signature/);
        return true;
      });
    } finally {
      await bad.close();
    }
  });

  test('a private key that is not a key is credentials_rejected without a request', async () => {
    const before = fake.oauth.requests;
    const bad = open(
      location(keyFile('-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n')),
      ctx,
    );
    try {
      assert.equal(await kindOf(bad.stat(`${bucket}/x`)), 'credentials_rejected');
      assert.equal(fake.oauth.requests, before);
    } finally {
      await bad.close();
    }
  });

  test('a loopback endpoint or token_uri is refused by the egress guard unless allowed', async () => {
    const guarded: StoreContext = { egress: createEgress([]), oauthApps: DEFAULT_OAUTH_APPS };
    // token_uri first: the token request is the first connection.
    const s1 = open(location(keyFile(good.privateKey)), guarded, TUNING);
    try {
      await assert.rejects(s1.stat(`${bucket}/x`), (err) => {
        assert.ok(isFerryError(err, 'invalid'), String(err));
        assert.match((err as Error).message, /egress/);
        return true;
      });
    } finally {
      await s1.close();
    }
  });

  test('an endpoint the guard refuses answers invalid even when the token endpoint is allowed', async () => {
    // The token endpoint through an allowed name, the API endpoint on loopback.
    const egress = createEgress(['localhost']);
    const tokenUri = fake.tokenUrl.replace('127.0.0.1', 'localhost');
    fake.oauth.addAccount('second@ferry-test.iam.gserviceaccount.com', good.publicKey);
    const key = keyFile(good.privateKey, {
      token_uri: tokenUri,
      client_email: 'second@ferry-test.iam.gserviceaccount.com',
    });
    const s = open(location(key), { egress, oauthApps: DEFAULT_OAUTH_APPS }, TUNING);
    try {
      await assert.rejects(s.stat(`${bucket}/x`), (err) => {
        assert.ok(isFerryError(err, 'invalid'), String(err));
        assert.match((err as Error).message, /egress to 127\.0\.0\.1/);
        return true;
      });
    } finally {
      await s.close();
    }
  });

  test('the gateway serves only under its secret prefix and brings session URIs back through itself', async () => {
    const gateway = await startGateway(fake.url, ctx.egress, OUTBOUND_DEFAULTS.idleMs);
    try {
      const origin = new URL(gateway.url).origin;
      const outside = await fetch(`${origin}/storage/v1/b?project=${PROJECT}`);
      assert.equal(outside.status, 404, 'no relay without the prefix');
      const res = await fetch(
        `${gateway.url}/upload/storage/v1/b/${bucket}/o?uploadType=resumable&name=g.txt`,
        {
          method: 'POST',
          headers: { authorization: await bearerOf(store), 'content-type': 'application/json' },
          body: '{}',
        },
      );
      assert.equal(res.status, 200, await res.text());
      const location = res.headers.get('location') ?? '';
      assert.ok(location.startsWith(`${gateway.url}/upload/storage/v1/b/`), location);
    } finally {
      await gateway.close();
    }
  });

  test('endpoint and token_uri must be http(s) URLs', () => {
    assert.throws(
      () => open(location(keyFile(good.privateKey), { endpoint: 'ftp://x' }), ctx),
      (err) => isFerryError(err, 'invalid'),
    );
    assert.throws(
      () => open(location(keyFile(good.privateKey, { token_uri: 'file:///etc/passwd' })), ctx),
      (err) => isFerryError(err, 'invalid'),
    );
  });

  test('a large write is a resumable session of 256 KiB chunks, and both hashes are reported', async () => {
    const data = randomBytes(3 * 256 * 1024 + 1000);
    const path = `${bucket}/resumable/big.bin`;
    const first = fake.requests.length;
    const info = await store.write(path, Readable.from([data]), { size: data.length });
    const sent = fake.requests.slice(first);
    assert.equal(sent.filter((r) => r.url.includes('uploadType=resumable') && r.method === 'POST').length, 1);
    const puts = sent.filter((r) => r.method === 'PUT' && r.url.includes('upload_id='));
    assert.equal(puts.length, 4, 'three full chunks and the rest');
    assert.deepEqual(
      puts.map((r) => r.headers['content-range']),
      [
        'bytes 0-262143/*',
        'bytes 262144-524287/*',
        'bytes 524288-786431/*',
        `bytes 786432-${data.length - 1}/${data.length}`,
      ],
    );
    const md5 = createHash('md5').update(data).digest('hex');
    const crc = new CRC32C();
    crc.update(data);
    const crc32c = Buffer.from(crc.toString(), 'base64').toString('hex');
    assert.deepEqual(info.hashes, { md5, crc32c });
    assert.deepEqual(info.verified, ['crc32c', 'md5'], 'both hashes of the bytes sent were compared');
    assert.deepEqual((await store.stat(path)).hashes, { md5, crc32c });
  });

  test('a single write declares its CRC32C and MD5, so GCS refuses a byte changed on the way: transient', async () => {
    const path = `${bucket}/proven/small.bin`;
    const data = randomBytes(1000);
    fake.server.corruptWhen((r) => r.url.includes('uploadType=multipart'));
    const err = await store
      .write(path, Readable.from([data]), { size: data.length })
      .catch((e: unknown) => e);
    assert.ok(isFerryError(err, 'transient'), String(err));
    assert.match((err as Error).message, /doesn't match calculated/);
    assert.equal(await kindOf(store.stat(path)), 'not_found');
    const info = await store.write(path, Readable.from([data]), { size: data.length });
    assert.deepEqual(info.verified, ['crc32c', 'md5']);
    assert.deepEqual(fake.state.objectsOf(bucket)?.get('proven/small.bin')?.data, data);
  });

  test('a resumable chunk changed on the way fails the write as transient and leaves no object', async () => {
    const path = `${bucket}/proven/big.bin`;
    const data = randomBytes(2 * 256 * 1024 + 10);
    fake.server.corruptWhen((r) => r.headers['content-range']?.startsWith('bytes 262144-') === true);
    const err = await store
      .write(path, Readable.from([data]), { size: data.length })
      .catch((e: unknown) => e);
    assert.ok(isFerryError(err, 'transient'), String(err));
    assert.match((err as Error).message, /crc32c is [0-9a-f]{8}, but the bytes sent hash to [0-9a-f]{8}/);
    assert.equal(await kindOf(store.stat(path)), 'not_found', 'the damaged object was deleted');
  });

  test('a throttled chunk fails the resumable upload as throttled and leaves no object', async () => {
    const path = `${bucket}/resumable/throttled.bin`;
    // The session start and the first chunk pass; the second chunk is throttled.
    fake.throttleNext(1, { status: 429, retryAfter: 4, after: 2 });
    const data = randomBytes(3 * 256 * 1024);
    assert.equal(await kindOf(store.write(path, Readable.from([data]), { size: data.length })), 'throttled');
    assert.equal(await kindOf(store.stat(path)), 'not_found');
  });

  test('a whole-object read is checked against the CRC32C GCS reports', async () => {
    const path = `${bucket}/checked/file.txt`;
    await store.write(path, Readable.from([Buffer.from('checked bytes')]), { size: 13 });
    const stored = fake.state.objectsOf(bucket)?.get('checked/file.txt');
    assert.ok(stored);
    stored.crc32c = 'AAAAAA==';
    assert.equal(await kindOf(store.read(path).then(readAll)), 'transient');
    // Ranges cannot be checked, and are not.
    assert.equal(
      (await readAll(await store.read(path, { range: { offset: 0, length: 7 } }))).toString(),
      'checked',
    );
  });

  test('a server-side copy repeats the rewrite call until GCS says it is done', async () => {
    const copy = store.features.copy;
    assert.ok(copy);
    const data = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz'); // 36 bytes, 7 per call
    await store.write(`${bucket}/rewrite/src.txt`, Readable.from([data]), { size: data.length });
    const first = fake.requests.length;
    const info = await copy(`${bucket}/rewrite/src.txt`, `${bucket}/rewrite/dst.txt`);
    const calls = fake.requests.slice(first).filter((r) => r.url.includes('/rewriteTo/'));
    assert.equal(calls.length, 6, 'ceil(36 / 7) rewrite calls');
    assert.ok(
      calls.slice(1).every((r) => r.url.includes('rewriteToken=')),
      'later calls carry the token',
    );
    assert.equal(info.size, data.length);
    assert.deepEqual(await readAll(await store.read(`${bucket}/rewrite/dst.txt`)), data);
  });

  test('a 503 answer is throttled with its Retry-After', async () => {
    const path = `${bucket}/answers/file.txt`;
    await store.write(path, Readable.from([Buffer.from('x')]), { size: 1 });
    fake.throttleNext(1, { status: 503, retryAfter: 3 });
    await assert.rejects(store.stat(path), (err) => {
      assert.ok(isFerryError(err, 'throttled'), String(err));
      assert.equal(err.retryAfterSeconds, 3);
      return true;
    });
    assert.equal((await store.stat(path)).size, 1);
  });

  test('buckets are listed page by page', async () => {
    const names = Array.from(
      { length: PAGE_SIZE + 2 },
      (_, i) => `paged-${i}-${randomBytes(3).toString('hex')}`,
    );
    for (const name of names) fake.state.createBucket(name, 'paging-project');
    const s = open(
      location(keyFile(good.privateKey), { endpoint: fake.url, project_id: 'paging-project' }),
      ctx,
      TUNING,
    );
    try {
      const first = fake.requests.length;
      const listed = await collect(s.list(''));
      assert.deepEqual(listed.map((e) => e.name).sort(), [...names].sort());
      assert.ok(listed.every((e) => e.size === -1 && e.isDir && e.path === e.name));
      const pages = fake.requests.slice(first).filter((r) => r.url.startsWith('/storage/v1/b?'));
      assert.equal(pages.length, 2, 'two pages of at most 5');
    } finally {
      await s.close();
    }
  });

  test('listing buckets needs a project: metadata project_id wins over the key', async () => {
    const other = `ferry-other-${randomBytes(4).toString('hex')}`;
    fake.state.createBucket(other, 'other-project');
    const s = open(
      location(keyFile(good.privateKey), { endpoint: fake.url, project_id: 'other-project' }),
      ctx,
    );
    try {
      const names = (await collect(s.list(''))).map((e) => e.name);
      assert.deepEqual(names, [other]);
    } finally {
      await s.close();
    }
    const { project_id: _, ...noProject } = keyFile(good.privateKey);
    const none = open(location(noProject as ServiceAccountKey), ctx);
    try {
      assert.equal(await kindOf(collect(none.list(''))), 'invalid');
    } finally {
      await none.close();
    }
  });
});

describe('gcs redirects and session URLs (docs/api.md, "Outbound calls")', () => {
  // The guard admits the fake (127.0.0.1) only; the forbidden server listens on 127.0.0.2.
  const fenced: StoreContext = { egress: createEgress(FAKES_ONLY), oauthApps: DEFAULT_OAUTH_APPS };
  let forbidden: ForbiddenServer;
  let store: Store;
  let bucket: string;

  before(async () => {
    forbidden = await ForbiddenServer.start();
    store = open(location(keyFile(good.privateKey)), fenced, TUNING);
    bucket = await newBucket(store);
    await store.write(`${bucket}/here.txt`, Readable.from([Buffer.from('here')]), { size: 4 });
  });

  after(async () => {
    fake.server.clearFaults();
    await store?.close();
    await forbidden?.close();
  });

  async function refused(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
    await assert.rejects(promise, (err) => {
      assert.ok(isFerryError(err, 'invalid'), String(err));
      assert.match((err as Error).message, pattern);
      assert.doesNotMatch((err as Error).message, /Bearer|BEGIN/);
      return true;
    });
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
  }

  test('an object download answered with a redirect to a refused address is refused, unfollowed', async () => {
    fake.server.inject({ status: 302, headers: { location: forbidden.url('/object') } });
    await refused(
      store.read(`${bucket}/here.txt`).then(readAll),
      new RegExp(`redirect to ${forbidden.origin}`),
    );
  });

  test('a metadata call answered with a redirect to a refused address is refused, unfollowed', async () => {
    fake.server.inject({ status: 307, headers: { location: forbidden.url('/metadata') } });
    await refused(store.stat(`${bucket}/here.txt`), new RegExp(`redirect to ${forbidden.origin}`));
  });

  test('a resumable session URL on another host is refused before any chunk is sent', async () => {
    // The session start answers with a session URL off the endpoint.
    fake.server.inject({
      status: 200,
      headers: { location: forbidden.url('/upload/storage/v1/b/x/o?upload_id=stolen') },
    });
    const data = randomBytes(2 * 256 * 1024 + 10);
    await refused(
      store.write(`${bucket}/session.bin`, Readable.from([data]), { size: data.length }),
      new RegExp(`session URL on ${forbidden.origin}`),
    );
    assert.equal(await kindOf(store.stat(`${bucket}/session.bin`)), 'not_found');
  });

  test('a redirect that stays on the endpoint is followed, through the guard', async () => {
    fake.server.inject({
      status: 302,
      headers: { location: `${fake.url}/storage/v1/b/${bucket}/o/here.txt?alt=media` },
    });
    assert.equal((await readAll(await store.read(`${bucket}/here.txt`))).toString(), 'here');
  });
});
