// onedrive against the fake Microsoft Graph (test/fakes/onedrive): the conformance suite, plus what is
// OneDrive's own: percent-encoded path segments, upload sessions whose URL never sees the token,
// 302 downloads, asynchronous copy, missing parents, quickXorHash, and Graph's error answers.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { isFerryError } from '../../src/errors.js';
import type { Entry, Store } from '../../src/stores/contract.js';
import { encodePath } from '../../src/stores/onedrive/client.js';
import { type OneDriveTuning, open } from '../../src/stores/onedrive/index.js';
import { FakeOneDrive, quickXorBase64 } from '../fakes/onedrive/index.js';
import { ForbiddenServer } from '../support/forbidden-server.js';
import { describeConformance } from './conformance.js';
import { oauthContext, oauthLocation } from './oauth-harness.js';

const PAGE_SIZE = 5;
const TUNING: Partial<OneDriveTuning> = { chunkSize: 640 * 1024, copyPollMs: 5, copyPollMaxMs: 20 };
const THROTTLE_SECONDS = 3;

const contextFor = (fake: FakeOneDrive) => oauthContext('onedrive', fake);
const locationWith = (accessToken: string, refreshToken?: string) =>
  oauthLocation('onedrive', accessToken, refreshToken);

/** POST …/children with a folder facet, as the OneDrive web app would. */
async function createFolder(fake: FakeOneDrive, token: string, path: string): Promise<void> {
  const segments = path.split('/');
  const name = segments.pop() as string;
  fake.mkdir(segments.join('/'));
  const parent = segments.length === 0 ? 'root' : `root:/${encodePath(segments.join('/'))}:`;
  const res = await fetch(`${fake.apiUrl}/me/drive/${parent}/children`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, folder: {}, '@microsoft.graph.conflictBehavior': 'fail' }),
  });
  assert.equal(res.status, 201, await res.text());
}

async function collect(entries: AsyncIterable<Entry>): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const entry of entries) out.push(entry);
  return out;
}

async function bytes(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describeConformance('onedrive', async () => {
  const fake = await FakeOneDrive.start({ maxPageSize: PAGE_SIZE });
  const tokens = fake.oauth.issue('onedrive-user');
  const ctx = contextFor(fake);
  const store = open(locationWith(tokens.access_token, tokens.refresh_token), ctx, TUNING);
  const base = `ferry-${randomBytes(4).toString('hex')}`;
  await createFolder(fake, tokens.access_token, base);
  const opened: Store[] = [store];
  const badToken = `EwB${randomBytes(18).toString('base64url')}`;
  return {
    store,
    base,
    pageSize: PAGE_SIZE,
    throttleRetryAfterSeconds: THROTTLE_SECONDS,
    throttleNext: (count) => fake.throttleNext(count, { status: 429, retryAfter: THROTTLE_SECONDS }),
    rejectedStore: async () => {
      const bad = open(locationWith(badToken), ctx, TUNING);
      opened.push(bad);
      return bad;
    },
    makeFolder: (path) => createFolder(fake, tokens.access_token, path),
    secretValues: [tokens.access_token, tokens.refresh_token, badToken],
    skip: {
      'names-reserved': 'OneDrive refuses " * : < > ? / \\ | in names (invalidRequest)',
      'names-question': 'OneDrive refuses "?" in names (invalidRequest)',
    },
    close: async () => {
      for (const s of opened) await s.close();
      await fake.close();
    },
  };
});

describe('onedrive store specifics', () => {
  let fake: FakeOneDrive;
  let store: Store;

  before(async () => {
    fake = await FakeOneDrive.start({ maxPageSize: 3 });
    const token = fake.oauth.issue('onedrive-user').access_token;
    store = open(locationWith(token), contextFor(fake), TUNING);
  });

  after(async () => {
    await store.close();
    await fake.close();
  });

  test('path segments are percent-encoded one by one', () => {
    assert.equal(encodePath('a b/c#d/e%f/g+h/ü/x?y'), 'a%20b/c%23d/e%25f/g%2Bh/%C3%BC/x%3Fy');
  });

  test('names with #, %, +, spaces and unicode reach Graph encoded and round-trip', async () => {
    const path = 'enc/dir #1/100% + more/naïve 日本 #%+.txt';
    const before = fake.requests.length;
    await store.write(path, Readable.from([Buffer.from('encoded')]), { size: 7 });
    assert.equal(fake.read(path)?.toString(), 'encoded');
    const put = fake.requests.slice(before).find((r) => r.method === 'PUT');
    assert.equal(
      put?.url,
      '/v1.0/me/drive/root:/enc/dir%20%231/100%25%20%2B%20more/na%C3%AFve%20%E6%97%A5%E6%9C%AC%20%23%25%2B.txt:/content?%40microsoft.graph.conflictBehavior=replace',
    );
    assert.equal((await bytes(await store.read(path))).toString(), 'encoded');
    const [entry] = await collect(store.list('enc/dir #1/100% + more'));
    assert.equal(entry?.name, 'naïve 日本 #%+.txt');
  });

  test('a name with "?" is sent encoded and refused by OneDrive as invalid', async () => {
    const before = fake.requests.length;
    await assert.rejects(
      store.write('enc/what?.txt', Readable.from([Buffer.from('q')]), { size: 1 }),
      (err) => isFerryError(err, 'invalid'),
    );
    assert.ok(fake.requests.slice(before).some((r) => r.url.includes('/enc/what%3F.txt:/content')));
  });

  test('an upload session sends 320 KiB multiples to the upload URL without the Authorization header', async () => {
    const size = 4 * 1024 * 1024 + 700 * 1024 + 3;
    const data = randomBytes(size);
    const before = fake.requests.length;
    const info = await store.write('big/session.bin', Readable.from([data]), { size });
    assert.equal(info.size, size);
    assert.deepEqual(info.verified, ['quickxor'], 'the fragments sent were hashed and compared');
    assert.ok(fake.read('big/session.bin')?.equals(data));
    const fragments = fake.requests.slice(before).filter((r) => r.url.startsWith('/upload/'));
    assert.ok(fragments.length > 1);
    for (const f of fragments) {
      assert.equal(f.headers.authorization, undefined, 'the upload URL never sees the token');
      assert.match(String(f.headers['content-range']), new RegExp(`^bytes \\d+-\\d+/${size}$`));
    }
    for (const f of fragments.slice(0, -1)) {
      const [, a, b] = /bytes (\d+)-(\d+)/.exec(String(f.headers['content-range'])) as RegExpExecArray;
      assert.equal((Number(b) - Number(a) + 1) % (320 * 1024), 0);
    }
  });

  test('a stream of unknown length over 4 MiB is spooled and sent with its total size', async () => {
    const size = 5 * 1024 * 1024 + 11;
    const data = randomBytes(size);
    const before = fake.requests.length;
    const info = await store.write(
      'big/unknown.bin',
      Readable.from([data.subarray(0, 12345), data.subarray(12345)]),
    );
    assert.equal(info.size, size);
    assert.ok(fake.read('big/unknown.bin')?.equals(data));
    const fragments = fake.requests.slice(before).filter((r) => r.url.startsWith('/upload/'));
    assert.ok(fragments.every((f) => String(f.headers['content-range']).endsWith(`/${size}`)));
  });

  test('a simple upload or a session fragment changed on the way fails as transient, naming both QuickXorHashes', async () => {
    const small = randomBytes(1000);
    fake.server.corruptWhen((r) => r.url.includes(':/content'));
    const err = await store
      .write('proof/small.bin', Readable.from([small]), { size: small.length })
      .catch((e) => e);
    assert.ok(isFerryError(err, 'transient'), String(err));
    assert.match(String(err), /quickxor is [0-9a-f]{40}, but the bytes sent hash to [0-9a-f]{40}/);
    const info = await store.write('proof/small.bin', Readable.from([small]), { size: small.length });
    assert.deepEqual(info.verified, ['quickxor']);
    assert.ok(fake.read('proof/small.bin')?.equals(small), 'the retry stored the right bytes');

    const size = 4 * 1024 * 1024 + 1;
    const big = randomBytes(size);
    fake.server.corruptWhen(
      (r) => r.url.startsWith('/upload/') && String(r.headers['content-range']).startsWith('bytes 655360-'),
    );
    const bigErr = await store.write('proof/big.bin', Readable.from([big]), { size }).catch((e) => e);
    assert.ok(isFerryError(bigErr, 'transient'), String(bigErr));
    assert.match(String(bigErr), /quickxor is/);
  });

  test('a download follows the 302 without the token and passes the range on', async () => {
    await store.write('dl/file.txt', Readable.from([Buffer.from('0123456789')]), { size: 10 });
    const before = fake.requests.length;
    assert.equal(
      (await bytes(await store.read('dl/file.txt', { range: { offset: 3, length: 4 } }))).toString(),
      '3456',
    );
    const fetched = fake.requests.slice(before).find((r) => r.url.startsWith('/download/'));
    assert.equal(fetched?.headers.authorization, undefined);
    assert.equal(fetched?.headers.range, 'bytes=3-6');
    assert.equal((await bytes(await store.read('dl/file.txt', { range: { offset: 10 } }))).length, 0);
  });

  test('copy polls the monitor URL until the copy completes, replacing the destination', async () => {
    await store.write('cp/a.txt', Readable.from([Buffer.from('source')]), { size: 6 });
    await store.write('cp/b.txt', Readable.from([Buffer.from('old')]), { size: 3 });
    const before = fake.requests.length;
    const info = await store.features.copy?.('cp/a.txt', 'cp/b.txt');
    assert.equal(info?.size, 6);
    assert.equal(fake.read('cp/b.txt')?.toString(), 'source');
    const polls = fake.requests.slice(before).filter((r) => r.url.startsWith('/monitor/'));
    assert.ok(polls.length >= 2, 'polled while in progress, then once completed');
    assert.ok(polls.every((p) => p.headers.authorization === undefined));
  });

  test('uploads into missing folders make them when the drive does not', async () => {
    fake.autoCreateParents = false;
    try {
      await store.write('made/on/demand.txt', Readable.from([Buffer.from('x')]), { size: 1 });
      assert.equal(fake.read('made/on/demand.txt')?.toString(), 'x');
      const size = 4 * 1024 * 1024 + 1;
      await store.write('made/too/big.bin', Readable.from([randomBytes(size)]), { size });
      assert.equal(fake.read('made/too/big.bin')?.length, size);
    } finally {
      fake.autoCreateParents = true;
    }
  });

  test('stat reports quickXorHash as hex and sha1 in lower case', async () => {
    const data = Buffer.from('hash me, OneDrive');
    await store.write('h/file.txt', Readable.from([data]), { size: data.length });
    const { hashes } = await store.stat('h/file.txt');
    assert.equal(hashes.quickxor, Buffer.from(quickXorBase64(data), 'base64').toString('hex'));
    assert.equal(hashes.sha1, createHash('sha1').update(data).digest('hex'));
  });

  test('Graph answers map to kinds: 503 with Retry-After throttled, without it transient', async () => {
    await store.write('errs/x.txt', Readable.from([Buffer.from('x')]), { size: 1 });
    fake.throttleNext(1, { status: 503, retryAfter: 7 });
    await assert.rejects(
      store.stat('errs/x.txt'),
      (err) => isFerryError(err, 'throttled') && err.retryAfterSeconds === 7,
    );
    fake.throttleNext(1, { status: 503 });
    await assert.rejects(store.stat('errs/x.txt'), (err) => isFerryError(err, 'transient'));
    fake.failNext(1, 500);
    await assert.rejects(store.stat('errs/x.txt'), (err) => isFerryError(err, 'transient'));
  });

  test('a file where a folder is needed answers conflict (nameAlreadyExists)', async () => {
    await store.write('clash/name', Readable.from([Buffer.from('f')]), { size: 1 });
    await assert.rejects(
      store.write('clash/name/inner.txt', Readable.from([Buffer.from('i')]), { size: 1 }),
      (err) => isFerryError(err, 'conflict'),
    );
  });

  test('a folder is not an object: stat and delete of a folder path answer not_found and keep it', async () => {
    fake.put('keep/inside/file.txt', 'f');
    await assert.rejects(store.stat('keep/inside'), (err) => isFerryError(err, 'not_found'));
    await assert.rejects(store.delete('keep/inside'), (err) => isFerryError(err, 'not_found'));
    assert.equal(fake.read('keep/inside/file.txt')?.toString(), 'f');
  });
});

describe('onedrive redirects and upload sessions (docs/api.md, "Outbound calls")', () => {
  // The store trusts the fake (its configured API origin); the forbidden server is on 127.0.0.2.
  let fake: FakeOneDrive;
  let forbidden: ForbiddenServer;
  let store: Store;

  before(async () => {
    fake = await FakeOneDrive.start();
    forbidden = await ForbiddenServer.start();
    store = open(locationWith(fake.oauth.issue('onedrive-user').access_token), contextFor(fake), TUNING);
  });

  after(async () => {
    await store?.close();
    await forbidden?.close();
    await fake?.close();
  });

  function refusedByTheGuard(err: unknown): true {
    assert.ok(isFerryError(err, 'invalid'), String(err));
    assert.match(err.message, /egress to 127\.0\.0\.2 .*not allowed: loopback/);
    return true;
  }

  test('an upload session uploadUrl on a refused address is checked by the egress guard: no fragment sent', async () => {
    fake.server.injectWhen((r) => r.url.includes('createUploadSession'), {
      status: 200,
      body: { uploadUrl: forbidden.url('/upload/session'), expirationDateTime: '2099-01-01T00:00:00Z' },
    });
    const size = 4 * 1024 * 1024 + 1;
    await assert.rejects(
      store.write('fenced/session.bin', Readable.from([randomBytes(size)]), { size }),
      refusedByTheGuard,
    );
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
    assert.equal(fake.read('fenced/session.bin'), undefined);
  });

  test('a download redirect to a refused address is checked by the egress guard, unfollowed', async () => {
    await store.write('fenced/file.txt', Readable.from([Buffer.from('file')]), { size: 4 });
    fake.server.injectWhen((r) => r.method === 'GET' && r.url.includes(':/content'), {
      status: 302,
      headers: { location: forbidden.url('/download/pre-authenticated') },
    });
    await assert.rejects(store.read('fenced/file.txt'), refusedByTheGuard);
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
  });
});
