// dropbox against the fake Dropbox API (test/fakes/dropbox): the conformance suite, plus what is
// Dropbox's own: header-safe Dropbox-API-Arg, the two hosts, upload sessions, case-insensitive paths,
// the content hash, replacing destinations on copy and move.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { isFerryError } from '../../src/errors.js';
import { parseRetryAfter } from '../../src/net/failures.js';
import type { Entry, Store } from '../../src/stores/contract.js';
import { headerSafeJson } from '../../src/stores/dropbox/client.js';
import { readDropboxError } from '../../src/stores/dropbox/errors.js';
import { type DropboxTuning, open } from '../../src/stores/dropbox/index.js';
import { PartReader, uploadParts } from '../../src/stores/shared/chunks.js';
import { ThreadedHash } from '../../src/stores/shared/hash-thread.js';
import { parentAndName, splitPath } from '../../src/stores/shared/paths.js';
import { FakeDropbox } from '../fakes/dropbox/server.js';
import { contentHash } from '../fakes/dropbox/state.js';
import { ForbiddenServer } from '../support/forbidden-server.js';
import { describeConformance } from './conformance.js';
import { oauthContext, oauthLocation } from './oauth-harness.js';

const PAGE_SIZE = 5;
const TUNING: Partial<DropboxTuning> = { partSize: 64 * 1024, listLimit: 2000 };
const THROTTLE_SECONDS = 4;

const contextFor = (fake: FakeDropbox) => oauthContext('dropbox', fake);
const locationWith = (accessToken: string, refreshToken?: string, metadata?: Record<string, unknown>) =>
  oauthLocation('dropbox', accessToken, refreshToken, metadata);

/** files/create_folder_v2 on the fake's api host, as the Dropbox app itself would. */
async function createFolder(fake: FakeDropbox, token: string, path: string): Promise<void> {
  const res = await fetch(`${fake.apiUrl}/2/files/create_folder_v2`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ path: `/${path}`, autorename: false }),
  });
  assert.equal(res.status, 200, await res.text());
}

describeConformance('dropbox', async () => {
  const fake = await new FakeDropbox({ pageSize: PAGE_SIZE }).start();
  const tokens = fake.oauth.issue('dbid:conformance');
  const ctx = contextFor(fake);
  const store = open(locationWith(tokens.access_token, tokens.refresh_token), ctx, TUNING);
  const base = `ferry-${randomBytes(4).toString('hex')}`;
  await createFolder(fake, tokens.access_token, base);
  const opened: Store[] = [store];
  const badToken = `sl.${randomBytes(18).toString('base64url')}`;
  return {
    store,
    base,
    pageSize: PAGE_SIZE,
    throttleRetryAfterSeconds: THROTTLE_SECONDS,
    throttleNext: (count) => fake.throttleNext(count, THROTTLE_SECONDS),
    rejectedStore: async () => {
      const bad = open(locationWith(badToken), ctx, TUNING);
      opened.push(bad);
      return bad;
    },
    makeFolder: (path) => createFolder(fake, tokens.access_token, path),
    secretValues: [tokens.access_token, tokens.refresh_token, badToken],
    skip: { 'names-reserved': 'Dropbox does not allow a backslash in names (malformed_path)' },
    close: async () => {
      for (const s of opened) await s.close();
      await fake.close();
    },
  };
});

async function collect(entries: AsyncIterable<Entry>): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const entry of entries) out.push(entry);
  return out;
}

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const body = (data: string | Buffer) => Readable.from([Buffer.from(data)]);

describe('dropbox specifics', () => {
  let fake: FakeDropbox;
  let store: Store;
  let token: string;

  before(async () => {
    fake = await new FakeDropbox({ pageSize: 3 }).start();
    token = fake.oauth.issue('dbid:specifics').access_token;
    store = open(locationWith(token, 'r', { account_id: 'dbid:specifics' }), contextFor(fake), TUNING);
  });

  after(async () => {
    await store?.close();
    await fake?.close();
  });

  test('Dropbox-API-Arg is header-safe JSON: non-ASCII and DEL written as \\u escapes', async () => {
    assert.equal(headerSafeJson({ path: '/ü\u007f🚀' }), '{"path":"/\\u00fc\\u007f\\ud83d\\ude80"}');
    const name = 'unicode/日本語 ü 🚀.txt';
    await store.write(name, body('hi'), { size: 2 });
    const call = fake.calls.findLast((c) => c.route === 'files/upload');
    assert.ok(call?.argHeader);
    assert.match(call.argHeader, /^[\x20-\x7e]+$/, 'only printable ASCII in the header');
    assert.ok(call.argHeader.includes('\\u65e5\\u672c\\u8a9e'), 'CJK characters escaped');
    assert.equal((call.arg as { path: string }).path, `/${name}`, 'the server decodes the exact name');
    assert.equal(await text(await store.read(name)), 'hi');
  });

  test('RPC routes go to the api host and content routes to the content host', async () => {
    fake.calls.length = 0;
    await store.write('hosts/a.txt', body('a'), { size: 1 });
    await store.stat('hosts/a.txt');
    await text(await store.read('hosts/a.txt'));
    await collect(store.list('hosts'));
    const byRoute = Object.fromEntries(fake.calls.map((c) => [c.route, c.host]));
    assert.deepEqual(byRoute, {
      'files/upload': 'content',
      'files/get_metadata': 'api',
      'files/download': 'content',
      'files/list_folder': 'api',
    });
  });

  test('an object above the part size goes through an upload session, part by part', async () => {
    fake.calls.length = 0;
    const size = 64 * 1024 * 2 + 100;
    const data = randomBytes(size);
    const info = await store.write('session/big.bin', Readable.from([data]));
    assert.equal(info.size, size);
    assert.deepEqual(
      fake.calls.map((c) => c.route),
      [
        'files/upload_session/start',
        'files/upload_session/append_v2',
        'files/upload_session/append_v2',
        'files/upload_session/finish',
      ],
    );
    const offsets = fake.calls
      .filter((c) => c.route === 'files/upload_session/append_v2')
      .map((c) => (c.arg as { cursor: { offset: number } }).cursor.offset);
    assert.deepEqual(offsets, [65536, 131072]);
    assert.equal(info.hashes.dropbox, contentHash(data), 'content_hash of the committed file');
    assert.deepEqual(info.verified, ['dropbox'], 'the parts sent were hashed and compared');
  });

  test('a single upload declares its content_hash, so Dropbox refuses a byte changed on the way: transient', async () => {
    const data = randomBytes(1000);
    fake.server.corruptWhen((r) => r.url.endsWith('/files/upload'));
    const err = await store.write('proof/small.bin', Readable.from([data]), { size: 1000 }).catch((e) => e);
    assert.ok(isFerryError(err, 'transient'), String(err));
    assert.match(String(err), /content_hash_mismatch/);
    const info = await store.write('proof/small.bin', Readable.from([data]), { size: 1000 });
    assert.deepEqual(info.verified, ['dropbox']);
    assert.equal(info.hashes.dropbox, contentHash(data), 'the retry stored the right bytes');
  });

  test('a session part changed on the way fails the write as transient, naming both content hashes', async () => {
    const data = randomBytes(64 * 1024 * 2 + 100);
    fake.server.corruptWhen((r) => r.url.endsWith('/append_v2'));
    const err = await store
      .write('proof/big.bin', Readable.from([data]), { size: data.length })
      .catch((e) => e);
    assert.ok(isFerryError(err, 'transient'), String(err));
    assert.match(String(err), /dropbox is [0-9a-f]{64}, but the bytes sent hash to [0-9a-f]{64}/);
  });

  test('stat reports content_hash, and the streaming hasher computes the same', async () => {
    const data = randomBytes(5 * 1024 * 1024 + 3); // crosses a 4 MiB block
    await store.write('hash/five.bin', Readable.from([data]), { size: data.length });
    const { hashes } = await store.stat('hash/five.bin');
    // The one streaming hasher a write uses (src/stores/shared/hash-thread.ts), fed in two pieces.
    const hasher = new ThreadedHash('dropbox');
    await hasher.update(data.subarray(0, 1000));
    await hasher.update(data.subarray(1000));
    assert.equal(hashes.dropbox, (await hasher.digest()).toString('hex'));
    assert.equal(hashes.dropbox, contentHash(data));
  });

  test('a recursive listing keeps the case each name was created with, and skips the folder itself', async () => {
    await store.write('Case/Mixed/File.TXT', body('x'), { size: 1 });
    const entries = await collect(store.list('Case', { recursive: true }));
    assert.deepEqual(entries.map((e) => e.path).sort(), ['Case/Mixed', 'Case/Mixed/File.TXT']);
  });

  test('copy and move replace an existing destination file', async () => {
    await store.write('replace/src.txt', body('new'), { size: 3 });
    await store.write('replace/dst.txt', body('old!'), { size: 4 });
    const copied = await store.features.copy?.('replace/src.txt', 'replace/dst.txt');
    assert.equal(copied?.size, 3);
    assert.equal(await text(await store.read('replace/dst.txt')), 'new');
    await store.write('replace/other.txt', body('moved'), { size: 5 });
    await store.features.move?.('replace/other.txt', 'replace/dst.txt');
    assert.equal(await text(await store.read('replace/dst.txt')), 'moved');
  });

  test('delete refuses a folder (folders are not objects) and leaves it intact', async () => {
    await store.write('keep/inside.txt', body('x'), { size: 1 });
    await assert.rejects(store.delete('keep'), (err) => isFerryError(err, 'not_found'));
    assert.equal((await store.stat('keep/inside.txt')).size, 1);
  });

  test('an expired access token is rejected as credentials_rejected with Dropbox words', async () => {
    const grant = fake.oauth.issue('dbid:specifics');
    fake.oauth.expireAccessToken(grant.access_token);
    const expired = open(locationWith(grant.access_token), contextFor(fake), TUNING);
    try {
      await assert.rejects(expired.stat('keep/inside.txt'), (err) => {
        assert.ok(isFerryError(err, 'credentials_rejected'));
        assert.match(err.message, /expired_access_token/);
        assert.ok(!err.message.includes(grant.access_token));
        return true;
      });
    } finally {
      await expired.close();
    }
  });

  test('the token endpoint keeps Dropbox refresh tokens: no new one, the old one works again', async () => {
    const grant = fake.oauth.issue('dbid:specifics');
    const refresh = () =>
      fetch(fake.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: grant.refresh_token }),
      });
    const first = (await (await refresh()).json()) as Record<string, unknown>;
    assert.equal(typeof first.access_token, 'string');
    assert.equal(first.refresh_token, undefined);
    assert.equal((await refresh()).status, 200);
    fake.oauth.revoke(grant.refresh_token);
    const revoked = await refresh();
    assert.equal(revoked.status, 400);
    assert.equal(((await revoked.json()) as { error: string }).error, 'invalid_grant');
  });

  test('a 5xx answer is transient; a refused connection is transient', async () => {
    fake.failNext(1, 503);
    await assert.rejects(store.stat('keep/inside.txt'), (err) => isFerryError(err, 'transient'));
    const ctx = contextFor(fake);
    ctx.oauthApps.dropbox = {
      tokenUrl: 'http://127.0.0.1:1/t',
      apiUrl: 'http://127.0.0.1:1',
      contentUrl: 'http://127.0.0.1:1',
    };
    const nowhere = open(locationWith(token), ctx, TUNING);
    try {
      await assert.rejects(nowhere.stat('a.txt'), (err) => isFerryError(err, 'transient'));
    } finally {
      await nowhere.close();
    }
  });

  test('Dropbox error answers map to ferry error kinds', () => {
    const kind = (status: number, json: unknown, retryAfterSeconds?: number) =>
      readDropboxError({
        status,
        headers: {},
        text: json === undefined ? 'Bad request' : JSON.stringify(json),
        json,
        retryAfterSeconds,
        operation: 'op',
      });
    const summary = (s: string) => ({ error_summary: s, error: {} });
    assert.equal(kind(409, summary('path/not_found/..')).kind, 'not_found');
    assert.equal(kind(409, summary('from_lookup/not_found/.')).kind, 'not_found');
    assert.equal(kind(409, summary('path/not_file/')).kind, 'not_found');
    assert.equal(kind(409, summary('to/conflict/file/.')).kind, 'conflict');
    assert.equal(kind(409, summary('path/too_many_write_operations/')).kind, 'throttled');
    assert.equal(kind(409, summary('path/insufficient_space/')).kind, 'invalid');
    assert.equal(
      kind(409, summary('lookup_failed/not_found/')).kind,
      'invalid',
      'a lost upload session is no missing object',
    );
    assert.equal(kind(401, summary('expired_access_token/')).kind, 'credentials_rejected');
    assert.equal(kind(403, summary('no_permission/')).kind, 'forbidden');
    assert.equal(kind(400, undefined).kind, 'invalid');
    assert.equal(kind(500, undefined).kind, 'transient');
    const throttled = kind(429, { error_summary: 'too_many_requests/', error: { retry_after: 9 } });
    assert.equal(throttled.kind, 'throttled');
    assert.equal(throttled.retryAfterSeconds, 9, 'from the body when the header is missing');
    assert.equal(kind(429, summary('too_many_requests/'), 3).retryAfterSeconds, 3, 'the header wins');
  });

  test('account: metadata account_id when recorded, else the location', () => {
    assert.equal(store.account, 'dropbox:dbid:specifics');
    const other = open(locationWith(token), contextFor(fake), TUNING);
    assert.match(other.account, /^dropbox:location:loc-dropbox-/);
    void other.close();
  });
});

// The shared pieces of the OAuth stores (src/stores/shared), exercised here as dropbox is their first user.
describe('stores/shared', () => {
  test('Retry-After is read as seconds or as an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120);
    assert.equal(parseRetryAfter(['7'], now), 7);
    assert.equal(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now), 30);
    assert.equal(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now), 0, 'a date in the past is 0');
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
  });

  test('paths with empty segments are refused, never repaired', () => {
    assert.deepEqual(splitPath(''), []);
    assert.deepEqual(splitPath('a/b c/d'), ['a', 'b c', 'd']);
    for (const bad of ['/a', 'a/', 'a//b'])
      assert.throws(
        () => splitPath(bad),
        (err) => isFerryError(err, 'invalid'),
      );
    assert.deepEqual(parentAndName('a/b/c.txt'), { parent: 'a/b', name: 'c.txt' });
  });

  test('uploadParts reads a part only once a permit is free, so memory is concurrency x part size', async () => {
    const chunks = Array.from({ length: 40 }, (_, i) => Buffer.alloc(7, i)); // 280 bytes in odd chunks
    const reader = new PartReader(Readable.from(chunks), 280);
    let inFlight = 0;
    let most = 0;
    const seen: number[] = [];
    // Each part is held until three are in flight (or the last, the ninth, has begun), then the oldest
    // goes. Whether to let one go is decided a turn of the event loop after a part begins or ends: the
    // source is in memory, so every part the loop could begin without a free permit has begun by then.
    const held: Array<() => void> = [];
    let lastBegun = false;
    const letOneGo = () =>
      setImmediate(() => {
        if (held.length >= 3 || (lastBegun && held.length > 0)) held.shift()?.();
      });
    const result = await uploadParts({
      reader,
      partSize: 32,
      concurrency: 3,
      uploadPart: async (part) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        // Parts held = parts in flight: the reader is never ahead of the permits.
        assert.ok(reader.bytesRead <= (part.index + 1) * 32);
        seen.push(part.offset);
        if (part.index === 8) lastBegun = true;
        const turn = new Promise<void>((resolve) => held.push(resolve));
        letOneGo();
        await turn;
        inFlight -= 1;
        letOneGo();
      },
    });
    assert.deepEqual(result, { parts: 9, size: 280 });
    assert.equal(most, 3);
    assert.deepEqual(seen, [0, 32, 64, 96, 128, 160, 192, 224, 256]);
  });

  test('uploadParts stops reading at the first failed part and rethrows it', async () => {
    let pulled = 0;
    const source = Readable.from(
      (function* () {
        for (let i = 0; i < 100; i++) {
          pulled += 1;
          yield Buffer.alloc(10);
        }
      })(),
    );
    const boom = new Error('part failed');
    await assert.rejects(
      uploadParts({
        reader: new PartReader(source),
        partSize: 10,
        uploadPart: async (part) => {
          if (part.index === 2) throw boom;
        },
      }),
      boom,
    );
    assert.ok(pulled < 10, `stopped early (pulled ${pulled} chunks)`);
  });

  test('a declared size is enforced: longer bodies fail while reading, shorter ones at the end', async () => {
    const longer = new PartReader(Readable.from([Buffer.alloc(50)]), 40);
    await assert.rejects(longer.read(64), (err) => isFerryError(err, 'invalid'));
    const shorter = new PartReader(Readable.from([Buffer.alloc(30)]), 40);
    await assert.rejects(uploadParts({ reader: shorter, partSize: 16, uploadPart: async () => {} }), (err) =>
      isFerryError(err, 'invalid'),
    );
  });
});

describe('dropbox redirects and upload sessions (docs/api.md, "Outbound calls")', () => {
  // The store trusts the fake (its configured API and content origins); the forbidden server is on
  // 127.0.0.2. Upload sessions are ids on the content host: there is no session URL to follow.
  let fake: FakeDropbox;
  let forbidden: ForbiddenServer;
  let store: Store;

  before(async () => {
    fake = await new FakeDropbox({}).start();
    forbidden = await ForbiddenServer.start();
    store = open(locationWith(fake.oauth.issue('dbid:fenced').access_token), contextFor(fake), TUNING);
  });

  after(async () => {
    await store?.close();
    await forbidden?.close();
    await fake?.close();
  });

  test('a download answered with a redirect is not followed', async () => {
    await store.write('fenced/file.txt', Readable.from([Buffer.from('file')]), { size: 4 });
    fake.server.injectWhen((r) => r.url.startsWith('/2/files/download'), {
      status: 302,
      headers: { location: forbidden.url('/download') },
    });
    await assert.rejects(store.read('fenced/file.txt'), (err) => isFerryError(err));
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
  });

  test('an upload session append answered with a redirect is not followed', async () => {
    fake.server.injectWhen((r) => r.url.startsWith('/2/files/upload_session/append'), {
      status: 307,
      headers: { location: forbidden.url('/upload_session/append_v2') },
    });
    const size = 3 * 64 * 1024;
    await assert.rejects(
      store.write('fenced/session.bin', Readable.from([randomBytes(size)]), { size }),
      (err) => isFerryError(err),
    );
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
  });
});
