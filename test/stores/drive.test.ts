// drive against the fake Drive API v3 (test/fakes/drive): the conformance suite, plus what is Drive's
// own: quotes and backslashes escaped in search queries, no duplicate names on overwrite, copy or
// move, resumable uploads in 256 KiB multiples, Google-native documents, and its error answers.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { isFerryError } from '../../src/errors.js';
import type { Entry, Store } from '../../src/stores/contract.js';
import { queryString } from '../../src/stores/drive/client.js';
import { type DriveTuning, open } from '../../src/stores/drive/index.js';
import { FakeDrive } from '../fakes/drive/index.js';
import { ForbiddenServer } from '../support/forbidden-server.js';
import { describeConformance } from './conformance.js';
import { oauthContext, oauthLocation } from './oauth-harness.js';

const PAGE_SIZE = 5;
const TUNING: Partial<DriveTuning> = { chunkSize: 512 * 1024 };
const THROTTLE_SECONDS = 3;

const contextFor = (fake: FakeDrive) => oauthContext('drive', fake);
const locationWith = (accessToken: string, refreshToken?: string) =>
  oauthLocation('drive', accessToken, refreshToken);

/** files.create of a folder, as the Drive web app would. */
async function createFolder(fake: FakeDrive, token: string, path: string): Promise<void> {
  const segments = path.split('/');
  const name = segments.pop() as string;
  const parent = fake.mkdir(segments.join('/'));
  const res = await fetch(`${fake.url}/drive/v3/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, mimeType: 'application/vnd.google-apps.folder', parents: [parent] }),
  });
  assert.equal(res.status, 200, await res.text());
}

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

describeConformance('drive', async () => {
  const fake = await FakeDrive.start({ maxPageSize: PAGE_SIZE });
  const tokens = fake.oauth.issue('drive-user');
  const ctx = contextFor(fake);
  const store = open(locationWith(tokens.access_token, tokens.refresh_token), ctx, TUNING);
  const base = `ferry-${randomBytes(4).toString('hex')}`;
  await createFolder(fake, tokens.access_token, base);
  const opened: Store[] = [store];
  const badToken = `ya29.${randomBytes(18).toString('base64url')}`;
  return {
    store,
    base,
    pageSize: PAGE_SIZE,
    throttleRetryAfterSeconds: THROTTLE_SECONDS,
    throttleNext: (count) => fake.throttleNext(count, { status: 403, retryAfter: THROTTLE_SECONDS }),
    rejectedStore: async () => {
      const bad = open(locationWith(badToken), ctx, TUNING);
      opened.push(bad);
      return bad;
    },
    makeFolder: (path) => createFolder(fake, tokens.access_token, path),
    secretValues: [tokens.access_token, tokens.refresh_token, badToken],
    close: async () => {
      for (const s of opened) await s.close();
      await fake.close();
    },
  };
});

describe('drive store specifics', () => {
  let fake: FakeDrive;
  let store: Store;
  let token: string;

  before(async () => {
    fake = await FakeDrive.start({ maxPageSize: 3 });
    token = fake.oauth.issue('drive-user').access_token;
    store = open(locationWith(token), contextFor(fake), TUNING);
  });

  after(async () => {
    await store.close();
    await fake.close();
  });

  test('query strings escape quotes and backslashes', () => {
    assert.equal(queryString("it's"), "'it\\'s'");
    assert.equal(queryString('back\\slash'), "'back\\\\slash'");
    assert.equal(queryString("\\'"), "'\\\\\\''");
  });

  test('a name with quotes and backslashes is found by an escaped query, not by a similar name', async () => {
    const odd = "o'brien \\ 'quoted' \\' end.txt";
    fake.put(`escape/${odd.replace("o'brien", 'obrien')}`, 'decoy');
    await store.write(`escape/${odd}`, Readable.from([Buffer.from('real')]), { size: 4 });
    assert.equal(await text(await store.read(`escape/${odd}`)), 'real');
    assert.equal(fake.read(`escape/${odd}`)?.toString(), 'real');
    const sent = fake.requests
      .map((r) => new URL(r.url, fake.url).searchParams.get('q'))
      .filter((q): q is string => q?.includes('brien') ?? false);
    assert.ok(sent.length > 0, 'the lookup went through files.list q');
    assert.ok(
      sent.every((q) => q.includes("name = 'o\\'brien \\\\ \\'quoted\\' \\\\\\' end.txt'")),
      sent.join('\n'),
    );
  });

  test('writing a name twice updates the file in place instead of adding a duplicate', async () => {
    await store.write('dup/same.txt', Readable.from([Buffer.from('one')]), { size: 3 });
    const firstId = fake.state.lookup('dup/same.txt')?.id;
    await store.write('dup/same.txt', Readable.from([Buffer.from('two!')]), { size: 4 });
    assert.equal(fake.countNamed('dup', 'same.txt'), 1);
    assert.equal(fake.state.lookup('dup/same.txt')?.id, firstId, 'same file id, new content');
    assert.equal(fake.read('dup/same.txt')?.toString(), 'two!');
    const patch = fake.requests.filter(
      (r) => r.method === 'PATCH' && r.url.startsWith('/upload/drive/v3/files/'),
    );
    assert.ok(patch.length > 0, 'the update went through PATCH /upload/drive/v3/files/{id}');
  });

  test('concurrent writes into a missing folder create that folder once', async () => {
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        store.write(`racing/inner/f${i}.txt`, Readable.from([Buffer.from(`f${i}`)]), { size: 2 }),
      ),
    );
    assert.equal(fake.countNamed('', 'racing'), 1);
    assert.equal(fake.countNamed('racing', 'inner'), 1);
    assert.equal((await collect(store.list('racing/inner'))).length, 6);
  });

  test('copy and move onto an existing name leave one file there', async () => {
    await store.write('cm/a.txt', Readable.from([Buffer.from('aaa')]), { size: 3 });
    await store.write('cm/b.txt', Readable.from([Buffer.from('bb')]), { size: 2 });
    await store.write('cm/c.txt', Readable.from([Buffer.from('c')]), { size: 1 });
    const copy = store.features.copy;
    const move = store.features.move;
    assert.ok(copy && move);
    await copy('cm/a.txt', 'cm/b.txt');
    assert.equal(fake.countNamed('cm', 'b.txt'), 1);
    assert.equal(fake.read('cm/b.txt')?.toString(), 'aaa');
    await move('cm/c.txt', 'cm/b.txt');
    assert.equal(fake.countNamed('cm', 'b.txt'), 1);
    assert.equal(fake.countNamed('cm', 'c.txt'), 0);
    assert.equal(fake.read('cm/b.txt')?.toString(), 'c');
  });

  test('a resumable upload sends 256 KiB multiples with Content-Range and follows 308 answers', async () => {
    const size = 5 * 1024 * 1024 + 300 * 1024 + 1;
    const data = randomBytes(size);
    const before = fake.requests.length;
    const info = await store.write('big/blob.bin', Readable.from([data]), { size });
    assert.equal(info.size, size);
    assert.deepEqual(info.verified, ['md5'], 'the MD5 of the chunks sent was compared with md5Checksum');
    assert.ok(fake.read('big/blob.bin')?.equals(data));
    const puts = fake.requests.slice(before).filter((r) => r.method === 'PUT');
    assert.ok(puts.length >= 2, 'more than one chunk');
    for (const put of puts.slice(0, -1)) {
      const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(put.headers['content-range']));
      assert.ok(m, `Content-Range ${put.headers['content-range']}`);
      assert.equal((Number(m[2]) - Number(m[1]) + 1) % (256 * 1024), 0);
      assert.equal(Number(m[3]), size);
    }
    assert.equal(
      puts.at(-1)?.headers['content-range'],
      `bytes ${size - (size % (512 * 1024))}-${size - 1}/${size}`,
    );
  });

  test('a stream of unknown length goes resumable with "*" totals until its last chunk', async () => {
    const size = 6 * 1024 * 1024 + 5;
    const data = randomBytes(size);
    const before = fake.requests.length;
    const info = await store.write(
      'big/unknown.bin',
      Readable.from([data.subarray(0, 1000), data.subarray(1000)]),
    );
    assert.equal(info.size, size);
    assert.ok(fake.read('big/unknown.bin')?.equals(data));
    const ranges = fake.requests
      .slice(before)
      .filter((r) => r.method === 'PUT')
      .map((r) => String(r.headers['content-range']));
    assert.ok(
      ranges.slice(0, -1).every((r) => r.endsWith('/*')),
      ranges.join(', '),
    );
    assert.ok(ranges.at(-1)?.endsWith(`/${size}`));
  });

  test('a multipart upload changed on the way fails as transient, naming both MD5s, and leaves no file', async () => {
    const data = randomBytes(1000);
    fake.server.corruptWhen((r) => r.url.includes('uploadType=multipart'));
    const err = await store
      .write('proof/small.bin', Readable.from([data]), { size: data.length })
      .catch((e) => e);
    assert.ok(isFerryError(err, 'transient'), String(err));
    assert.match(String(err), /md5 is [0-9a-f]{32}, but the bytes sent hash to [0-9a-f]{32}/);
    assert.equal(fake.read('proof/small.bin'), undefined, 'the damaged new file was deleted');
    const info = await store.write('proof/small.bin', Readable.from([data]), { size: data.length });
    assert.deepEqual(info.verified, ['md5']);
    assert.ok(fake.read('proof/small.bin')?.equals(data));
  });

  test('a resumable chunk changed on the way fails as transient; a file that was there keeps its id', async () => {
    await store.write('proof/big.bin', Readable.from([Buffer.from('before')]), { size: 6 });
    const id = fake.state.lookup('proof/big.bin')?.id;
    const size = 5 * 1024 * 1024 + 1;
    const data = randomBytes(size);
    fake.server.corruptWhen(
      (r) => r.method === 'PUT' && String(r.headers['content-range']).startsWith('bytes 524288-'),
    );
    const err = await store.write('proof/big.bin', Readable.from([data]), { size }).catch((e) => e);
    assert.ok(isFerryError(err, 'transient'), String(err));
    assert.match(String(err), /md5 is/);
    assert.equal(fake.state.lookup('proof/big.bin')?.id, id);
  });

  test('Google-native documents are listed with size 0 but cannot be read', async () => {
    fake.putGoogleDoc('docs/Plan');
    const [entry] = await collect(store.list('docs'));
    assert.equal(entry?.name, 'Plan');
    assert.equal(entry?.size, 0);
    assert.equal(entry?.mimeType, 'application/vnd.google-apps.document');
    const info = await store.stat('docs/Plan');
    assert.deepEqual(info.hashes, {});
    await assert.rejects(store.read('docs/Plan'), (err) => isFerryError(err, 'unsupported'));
  });

  test('a 429 without Retry-After is throttled, a 503 transient, a 403 that is no rate limit forbidden', async () => {
    await store.write('errs/x.txt', Readable.from([Buffer.from('x')]), { size: 1 });
    fake.throttleNext(1, { status: 429 });
    await assert.rejects(store.stat('errs/x.txt'), (err) => isFerryError(err, 'throttled'));
    fake.failNext(1, 503);
    await assert.rejects(store.stat('errs/x.txt'), (err) => isFerryError(err, 'transient'));
    fake.throttleNext(1, { status: 403, reason: 'insufficientFilePermissions' });
    await assert.rejects(store.stat('errs/x.txt'), (err) => isFerryError(err, 'forbidden'));
    assert.equal((await store.stat('errs/x.txt')).size, 1);
  });

  test('a folder is not an object: stat and delete of a folder path answer not_found', async () => {
    fake.mkdir('only-folder/inside');
    await assert.rejects(store.stat('only-folder/inside'), (err) => isFerryError(err, 'not_found'));
    await assert.rejects(store.delete('only-folder/inside'), (err) => isFerryError(err, 'not_found'));
  });
});

describe('drive redirects and upload sessions (docs/api.md, "Outbound calls")', () => {
  // The store trusts the fake (its configured API origin); the forbidden server is on 127.0.0.2.
  let fake: FakeDrive;
  let forbidden: ForbiddenServer;
  let store: Store;

  before(async () => {
    fake = await FakeDrive.start();
    forbidden = await ForbiddenServer.start();
    store = open(locationWith(fake.oauth.issue('drive-user').access_token), contextFor(fake), TUNING);
  });

  after(async () => {
    await store?.close();
    await forbidden?.close();
    await fake?.close();
  });

  test('a resumable session URI on another host is refused: no chunk and no token leave ferry', async () => {
    fake.server.injectWhen((r) => r.url.includes('uploadType=resumable'), {
      status: 200,
      headers: { location: forbidden.url('/upload/drive/v3/files?uploadType=resumable&upload_id=x') },
    });
    const size = 5 * 1024 * 1024 + 1;
    await assert.rejects(
      store.write('fenced/session.bin', Readable.from([randomBytes(size)]), { size }),
      (err) => {
        assert.ok(isFerryError(err, 'invalid'), String(err));
        assert.match(err.message, /http:\/\/127\.0\.0\.2:\d+ is not one of the provider's own hosts/);
        return true;
      },
    );
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
    assert.equal(fake.read('fenced/session.bin'), undefined);
  });

  test('a download answered with a redirect is not followed', async () => {
    await store.write('fenced/file.txt', Readable.from([Buffer.from('file')]), { size: 4 });
    fake.server.injectWhen((r) => r.url.includes('alt=media'), {
      status: 302,
      headers: { location: forbidden.url('/download') },
    });
    await assert.rejects(store.read('fenced/file.txt'), (err) => isFerryError(err));
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
  });
});
