// box against the fake Box API (test/fakes/box): the conformance suite, plus what is Box's own: name
// conflicts (new versions, copy/move over a file), chunked upload sessions with digests and a 202
// commit, the anonymous redirect download, and the folder-id cache going stale.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { isFerryError } from '../../src/errors.js';
import { conflictOf, readBoxError } from '../../src/stores/box/errors.js';
import { type BoxTuning, open } from '../../src/stores/box/index.js';
import type { Store } from '../../src/stores/contract.js';
import { FakeBox } from '../fakes/box/server.js';
import { ForbiddenServer } from '../support/forbidden-server.js';
import { describeConformance } from './conformance.js';
import { oauthContext, oauthLocation } from './oauth-harness.js';

const KiB = 1024;
const PAGE_SIZE = 5;
const PART_SIZE = 64 * KiB;
const TUNING: Partial<BoxTuning> = {
  singleRequestMax: 256 * KiB,
  partSize: PART_SIZE,
  concurrency: 3,
  pageSize: 1000,
};
const THROTTLE_SECONDS = 6;

function fakeOptions() {
  return { pageSize: PAGE_SIZE, partSize: PART_SIZE, minSessionSize: 256 * KiB };
}

const contextFor = (fake: FakeBox) => oauthContext('box', fake);
const locationWith = (accessToken: string, metadata: Record<string, unknown> = {}) =>
  oauthLocation('box', accessToken, 'r', metadata);

/** Creates the folders of `path` through the Box API (list items, POST /folders), as the Box app would. */
async function makeFolders(fake: FakeBox, token: string, path: string): Promise<string> {
  let id = '0';
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  for (const name of path.split('/')) {
    const res = await fetch(`${fake.apiUrl}/2.0/folders/${id}/items?limit=1000&fields=name`, { headers });
    const items = (await res.json()) as { entries: Array<{ id: string; name: string; type: string }> };
    const found = items.entries.find((e) => e.name === name && e.type === 'folder');
    if (found) {
      id = found.id;
      continue;
    }
    const made = await fetch(`${fake.apiUrl}/2.0/folders`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name, parent: { id } }),
    });
    assert.equal(made.status, 201, await made.clone().text());
    id = ((await made.json()) as { id: string }).id;
  }
  return id;
}

describeConformance('box', async () => {
  const fake = await new FakeBox(fakeOptions()).start();
  const tokens = fake.oauth.issue('user-conformance');
  const ctx = contextFor(fake);
  const store = open(locationWith(tokens.access_token), ctx, TUNING);
  const base = `ferry-${randomBytes(4).toString('hex')}`;
  await makeFolders(fake, tokens.access_token, base);
  const opened: Store[] = [store];
  const badToken = randomBytes(24).toString('base64url');
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
    makeFolder: async (path) => {
      await makeFolders(fake, tokens.access_token, path);
    },
    secretValues: [tokens.access_token, tokens.refresh_token, badToken],
    skip: { 'names-reserved': 'Box does not allow "/" or "\\" in names (item_name_invalid)' },
    close: async () => {
      for (const s of opened) await s.close();
      await fake.close();
    },
  };
});

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const body = (data: string | Buffer) => Readable.from([Buffer.from(data)]);

describe('box specifics', () => {
  let fake: FakeBox;
  let store: Store;
  let token: string;

  before(async () => {
    fake = await new FakeBox(fakeOptions()).start();
    token = fake.oauth.issue('user-specifics').access_token;
    store = open(locationWith(token, { user_id: '42' }), contextFor(fake), TUNING);
  });

  after(async () => {
    await store?.close();
    await fake?.close();
  });

  test('writing over an existing name uploads a new version of the same file', async () => {
    const first = await store.write('versions/a.txt', body('one'), { size: 3 });
    const tree = fake.tree('user-specifics');
    const before = [...tree.items.values()].find((n) => n.name === 'a.txt');
    await store.write('versions/a.txt', body('two!'), { size: 4 });
    const after = [...tree.items.values()].filter((n) => n.name === 'a.txt');
    assert.equal(after.length, 1, 'still one file');
    assert.equal(after[0]?.id, before?.id, 'the same file id, a new version');
    assert.equal(await text(await store.read('versions/a.txt')), 'two!');
    assert.equal(first.hashes.sha1, createHash('sha1').update('one').digest('hex'));
    const versionCall = fake.calls.findLast(
      (c) => c.method === 'POST' && c.path.endsWith(`/files/${before?.id}/content`),
    );
    assert.equal(versionCall?.host, 'upload', 'POST /files/{id}/content on the upload host');
  });

  test('a name taken by a folder is a conflict, not a silent overwrite', async () => {
    await store.write('clash/dir/inner.txt', body('x'), { size: 1 });
    await assert.rejects(store.write('clash/dir', body('y'), { size: 1 }), (err) =>
      isFerryError(err, 'conflict'),
    );
    assert.equal(await text(await store.read('clash/dir/inner.txt')), 'x');
  });

  test('a chunked upload sends parts with Content-Range and digests, and commits again after a 202', async () => {
    fake.commitPending = 1;
    const size = PART_SIZE * 5 + 123;
    const data = randomBytes(size);
    fake.calls.length = 0;
    const info = await store.write('chunked/big.bin', Readable.from([data]), { size });
    assert.equal(info.size, size);
    assert.equal(info.hashes.sha1, createHash('sha1').update(data).digest('hex'));
    assert.deepEqual(info.verified, ['sha1'], 'the SHA-1 of the parts sent was compared with the file’s');
    const routes = fake.calls.map((c) => `${c.method} ${c.path.replace(/[0-9A-F]{32}/, '{id}')}`);
    assert.equal(
      routes.filter((r) => r === 'PUT /api/2.0/files/upload_sessions/{id}').length,
      6,
      'six parts',
    );
    assert.equal(routes.filter((r) => r.endsWith('/commit')).length, 2, 'committed again after 202');
    assert.equal(fake.sessions.size, 0);
    // Over an existing file: a session for a new version of it.
    await store.write('chunked/big.bin', Readable.from([data.subarray(0, PART_SIZE * 5)]), {
      size: PART_SIZE * 5,
    });
    assert.equal((await store.stat('chunked/big.bin')).size, PART_SIZE * 5);
  });

  test('a single upload or a part changed on the way is refused by its SHA-1: transient, and the retry lands', async () => {
    const small = randomBytes(1000);
    fake.server.corruptWhen((r) => r.url.startsWith('/api/2.0/files/content'));
    const err = await store
      .write('chunked/proof-small.bin', Readable.from([small]), { size: 1000 })
      .catch((e) => e);
    assert.ok(isFerryError(err, 'transient'), String(err));
    assert.match(String(err), /bad_digest/);
    const info = await store.write('chunked/proof-small.bin', Readable.from([small]), { size: 1000 });
    assert.deepEqual(info.verified, ['sha1']);
    assert.equal(info.hashes.sha1, createHash('sha1').update(small).digest('hex'));

    const size = PART_SIZE * 4 + 1;
    const big = randomBytes(size);
    fake.server.corruptWhen((r) => String(r.headers['content-range']).startsWith(`bytes ${PART_SIZE}-`));
    const bigErr = await store.write('chunked/proof-big.bin', Readable.from([big]), { size }).catch((e) => e);
    assert.ok(isFerryError(bigErr, 'transient'), String(bigErr));
    assert.match(String(bigErr), /digest/);
    assert.equal(fake.sessions.size, 0, 'the session was aborted');
  });

  test('a failed chunked upload aborts its session', async () => {
    const size = PART_SIZE * 5;
    await assert.rejects(store.write('chunked/short.bin', Readable.from([randomBytes(size - 10)]), { size }));
    assert.equal(fake.sessions.size, 0, 'the session was removed');
    assert.ok(fake.calls.some((c) => c.method === 'DELETE' && c.path.includes('/upload_sessions/')));
  });

  test('a download follows the redirect without sending the bearer token to the download host', async () => {
    await store.write('dl/file.txt', body('0123456789'), { size: 10 });
    fake.calls.length = 0;
    assert.equal(await text(await store.read('dl/file.txt', { range: { offset: 2, length: 3 } })), '234');
    const download = fake.calls.find((c) => c.host === 'download');
    assert.ok(download, 'the download URL was fetched');
    assert.equal(download.authorized, false);
  });

  test('copy and move replace a file in the way', async () => {
    await store.write('relocate/src.txt', body('new'), { size: 3 });
    await store.write('relocate/dst.txt', body('old!'), { size: 4 });
    const copied = await store.features.copy?.('relocate/src.txt', 'relocate/dst.txt');
    assert.equal(copied?.size, 3);
    assert.equal(await text(await store.read('relocate/dst.txt')), 'new');
    await store.write('relocate/other.txt', body('moved'), { size: 5 });
    await store.features.move?.('relocate/other.txt', 'relocate/deeper/dst.txt');
    assert.equal(await text(await store.read('relocate/deeper/dst.txt')), 'moved');
    await assert.rejects(store.stat('relocate/other.txt'), (err) => isFerryError(err, 'not_found'));
  });

  test('a folder deleted and made again behind the store is found again (stale folder ids)', async () => {
    await store.write('stale/sub/a.txt', body('a'), { size: 1 });
    const tree = fake.tree('user-specifics');
    const sub = [...tree.items.values()].find((n) => n.name === 'sub' && n.type === 'folder');
    assert.ok(sub);
    for (const node of [...tree.items.values()]) if (node.parentId === sub.id) tree.items.delete(node.id);
    tree.items.delete(sub.id);
    await makeFolders(fake, token, 'stale/sub');
    await store.write('stale/sub/b.txt', body('b'), { size: 1 });
    assert.equal(await text(await store.read('stale/sub/b.txt')), 'b');
  });

  test('a stream of unknown length above the single-request limit is spooled and sent in parts', async () => {
    const size = 256 * KiB + PART_SIZE + 1;
    const data = randomBytes(size);
    const chunks = [data.subarray(0, 1000), data.subarray(1000, 200_000), data.subarray(200_000)];
    const info = await store.write('spool/unknown.bin', Readable.from(chunks));
    assert.equal(info.size, size);
    assert.equal(info.hashes.sha1, createHash('sha1').update(data).digest('hex'));
  });

  test('a 401 with an empty body is credentials_rejected, with the WWW-Authenticate reason', async () => {
    const bad = open(locationWith('not-a-token'), contextFor(fake), TUNING);
    try {
      await assert.rejects(bad.stat('versions/a.txt'), (err) => {
        assert.ok(isFerryError(err, 'credentials_rejected'));
        assert.match(err.message, /access token provided is invalid/);
        return true;
      });
    } finally {
      await bad.close();
    }
  });

  test('the token endpoint rotates single-use refresh tokens: a used one answers invalid_grant', async () => {
    const grant = fake.oauth.issue('user-specifics');
    const refresh = async (refreshToken: string) =>
      fetch(fake.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: 'c',
        }),
      });
    const first = await refresh(grant.refresh_token);
    assert.equal(first.status, 200);
    const answer = (await first.json()) as {
      access_token: string;
      refresh_token: string;
      expires_in: number;
    };
    assert.notEqual(answer.refresh_token, grant.refresh_token, 'a new refresh token every time');
    const again = await refresh(grant.refresh_token);
    assert.equal(again.status, 400);
    assert.equal(((await again.json()) as { error: string }).error, 'invalid_grant');
    const refreshed = open(locationWith(answer.access_token), contextFor(fake), TUNING);
    try {
      await refreshed.write('refreshed/ok.txt', body('ok'), { size: 2 });
    } finally {
      await refreshed.close();
    }
    fake.oauth.failNext('server_error');
    assert.equal((await refresh(answer.refresh_token)).status, 503, 'a forced answer');
    assert.equal((await refresh(answer.refresh_token)).status, 200, 'then the grant works again');
  });

  test('Box error answers map to ferry error kinds', () => {
    const read = (status: number, json: unknown, retryAfterSeconds?: number) =>
      readBoxError({ status, headers: {}, text: '', json, retryAfterSeconds, operation: 'op' });
    const error = (status: number, code: string, context_info?: unknown) => ({
      type: 'error',
      status,
      code,
      message: code,
      context_info,
    });
    assert.equal(read(404, error(404, 'not_found')).kind, 'not_found');
    assert.equal(read(403, error(403, 'access_denied_insufficient_permissions')).kind, 'forbidden');
    assert.equal(read(400, error(400, 'item_name_invalid')).kind, 'invalid');
    assert.equal(read(503, undefined).kind, 'transient');
    assert.equal(read(401, undefined).kind, 'credentials_rejected');
    const throttled = read(429, error(429, 'rate_limit_exceeded'), 11);
    assert.equal(throttled.kind, 'throttled');
    assert.equal(throttled.retryAfterSeconds, 11);
    const folderConflict = read(
      409,
      error(409, 'item_name_in_use', { conflicts: [{ type: 'folder', id: '12' }] }),
    );
    assert.deepEqual(conflictOf(folderConflict), { type: 'folder', id: '12' }, 'folders: an array');
    const fileConflict = read(409, error(409, 'item_name_in_use', { conflicts: { type: 'file', id: '34' } }));
    assert.deepEqual(conflictOf(fileConflict), { type: 'file', id: '34' }, 'uploads: one object');
  });

  test('account: metadata user_id when recorded, else the location', async () => {
    assert.equal(store.account, 'box:42');
    const other = open(locationWith(token), contextFor(fake), TUNING);
    assert.match(other.account, /^box:location:loc-box-/);
    await other.close();
  });
});

describe('box redirects and upload sessions (docs/api.md, "Outbound calls")', () => {
  // The store trusts the fake (its configured API and upload origins); the forbidden server is on
  // 127.0.0.2.
  let fake: FakeBox;
  let forbidden: ForbiddenServer;
  let store: Store;

  before(async () => {
    fake = await new FakeBox(fakeOptions()).start();
    forbidden = await ForbiddenServer.start();
    store = open(locationWith(fake.oauth.issue('user-fenced').access_token), contextFor(fake), TUNING);
  });

  after(async () => {
    await store?.close();
    await forbidden?.close();
    await fake?.close();
  });

  test('a download redirect to a refused address is checked by the egress guard, unfollowed', async () => {
    await store.write('fenced/file.txt', Readable.from([Buffer.from('file')]), { size: 4 });
    fake.server.injectWhen((r) => r.method === 'GET' && /\/files\/\w+\/content/.test(r.url), {
      status: 302,
      headers: { location: forbidden.url('/dl/token') },
    });
    await assert.rejects(store.read('fenced/file.txt'), (err) => {
      assert.ok(isFerryError(err, 'invalid'), String(err));
      assert.match(err.message, /egress to 127\.0\.0\.2 .*not allowed: loopback/);
      return true;
    });
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
  });

  test("an upload session's endpoints are never used: parts go to the configured upload host", async () => {
    const elsewhere = (what: string) => forbidden.url(`/2.0/files/upload_sessions/F00/${what}`);
    fake.server.injectWhen((r) => r.method === 'POST' && r.url.endsWith('/2.0/files/upload_sessions'), {
      status: 201,
      body: {
        id: 'F00',
        type: 'upload_session',
        part_size: PART_SIZE,
        total_parts: 5,
        num_parts_processed: 0,
        session_expires_at: '2099-01-01T00:00:00Z',
        session_endpoints: {
          upload_part: elsewhere(''),
          commit: elsewhere('commit'),
          abort: elsewhere(''),
          list_parts: elsewhere('parts'),
          status: elsewhere(''),
          log_event: elsewhere('log'),
        },
      },
    });
    const size = 5 * PART_SIZE;
    const before = fake.server.requests.length;
    // The fake knows no session F00: its first part is refused there, and the session aborted there.
    await assert.rejects(store.write('fenced/session.bin', Readable.from([randomBytes(size)]), { size }));
    const sent = fake.server.requests.slice(before).map((r) => `${r.method} ${r.url}`);
    assert.ok(sent.includes('PUT /api/2.0/files/upload_sessions/F00'), sent.join('\n'));
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
  });
});
