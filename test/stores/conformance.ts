// The one conformance suite every store passes (after rclone's fstest): each provider's test file
// builds a harness around a real local server or a fake of the provider's API and calls
// describeConformance. A store that lacks a capability skips those cases with a stated reason (the
// harness's `skip` map); everything else is required. Test names state the rule they check.
//
// Every case works under its own folder below `harness.base`, so a failure in one does not disturb
// the next. Cases run one after another in declaration order (node:test's default), which the
// throttling cases rely on: `throttleNext` answers the very next provider request.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { type ErrorKind, isFerryError } from '../../src/errors.js';
import { declarationOf } from '../../src/providers.js';
import type { Entry, ObjectInfo, Store } from '../../src/stores/contract.js';

/** Groups of cases a harness may skip, each with the reason it states. */
export type ConformanceCase =
  /** throttleNext cannot be honoured (no way to inject the provider's throttle answer). */
  | 'throttling'
  /** rejectedStore cannot be built (the server accepts any credentials). */
  | 'rejected-credentials'
  /** makeFolder is absent: no way to create a folder with nothing in it. */
  | 'empty-folders'
  /** Objects larger than one upload part (the chunked / multipart path). */
  | 'large-objects'
  /** Names with characters some providers forbid: " * : < > | \ */
  | 'names-reserved'
  /** "?" in a name (OneDrive and SharePoint refuse it). */
  | 'names-question'
  /** A name in Unicode NFD (decomposed) form must stay NFD, byte for byte. */
  | 'names-nfd'
  /** Listing past the page size (pageSize + 1 objects). */
  | 'pagination';

export interface ConformanceHarness {
  /** A store with good credentials. */
  store: Store;
  /**
   * A fresh, empty area to work in, which exists when the harness returns: a bucket name on bucket
   * stores (created by the harness), a folder path on folder stores (created by the harness). Every
   * path the suite uses starts with it.
   */
  base: string;
  /** A store on the same server whose credentials the provider rejects for good. */
  rejectedStore(): Promise<Store>;
  /**
   * The next `count` provider requests are answered with the provider's own throttle answer (its
   * status, headers including Retry-After, and body).
   */
  throttleNext(count: number): void;
  /** When set, the Retry-After (seconds) the throttle answer carries; the error must report exactly it. */
  throttleRetryAfterSeconds?: number;
  /**
   * The listing page size in force (fakes: set small; real servers: their max-keys). The suite writes
   * pageSize + 1 objects to cross a page.
   */
  pageSize: number;
  /**
   * Creates an empty folder at `path` with the provider's own means (folder stores: create-folder
   * call; bucket stores: a zero-byte "path/" marker object). Absent: the empty-folder cases skip.
   */
  makeFolder?(path: string): Promise<void>;
  /** Secret values of both stores; no error message may contain one. */
  secretValues?: string[];
  /** Cases this store skips, each with the reason it states. */
  skip?: Partial<Record<ConformanceCase, string>>;
  close(): Promise<void>;
}

/** How far a reported modTime may be from the local clock (servers' clocks drift). */
const CLOCK_SLACK_MS = 5 * 60 * 1000;

// ---------------------------------------------------------------------------------------------
// Helpers

function join(...parts: string[]): string {
  return parts.filter((p) => p !== '').join('/');
}

function lastSegment(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}

async function collect(entries: AsyncIterable<Entry>): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const entry of entries) out.push(entry);
  return out;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

async function sha256Of(stream: Readable): Promise<{ hex: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    hash.update(buf);
    size += buf.length;
  }
  return { hex: hash.digest('hex'), size };
}

/** Deterministic pseudo-random bytes, generated chunk by chunk so large objects never sit in memory. */
function patternStream(size: number, seed: number): Readable {
  const chunkSize = 256 * 1024;
  let state = seed >>> 0 || 1;
  let left = size;
  return Readable.from(
    (function* () {
      while (left > 0) {
        const n = Math.min(chunkSize, left);
        const buf = Buffer.allocUnsafe(n);
        for (let i = 0; i < n; i += 4) {
          // xorshift32
          state ^= state << 13;
          state ^= state >>> 17;
          state ^= state << 5;
          state >>>= 0;
          if (i + 4 <= n) buf.writeUInt32LE(state, i);
          else for (let j = i; j < n; j++) buf[j] = (state >>> ((j - i) * 8)) & 0xff;
        }
        left -= n;
        yield buf;
      }
    })(),
    { objectMode: false },
  );
}

function patternSha256(size: number, seed: number): Promise<{ hex: string; size: number }> {
  return sha256Of(patternStream(size, seed));
}

function bodyOf(data: string | Buffer): Readable {
  const buf = typeof data === 'string' ? Buffer.from(data) : data;
  return Readable.from(buf.length === 0 ? [] : [buf]);
}

async function expectKind(promise: Promise<unknown>, kind: ErrorKind, what: string): Promise<unknown> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught !== undefined, `${what}: expected a FerryError of kind ${kind}, but it succeeded`);
  assert.ok(
    isFerryError(caught, kind),
    `${what}: expected a FerryError of kind ${kind}, got ${
      isFerryError(caught) ? `kind ${caught.kind}: ${caught.message}` : String(caught)
    }`,
  );
  return caught;
}

function assertNearNow(date: Date | undefined, what: string): void {
  assert.ok(date instanceof Date, `${what}: modTime must be a Date`);
  assert.ok(!Number.isNaN(date.getTime()), `${what}: modTime must be a valid Date`);
  const drift = Math.abs(date.getTime() - Date.now());
  assert.ok(drift < CLOCK_SLACK_MS, `${what}: modTime ${date.toISOString()} is ${drift} ms from now`);
}

function assertFileEntry(entry: Entry | undefined, path: string, size: number): void {
  assert.ok(entry, `no entry for ${path}`);
  assert.equal(entry.path, path, 'path is the whole path from the location root');
  assert.equal(entry.name, lastSegment(path), 'name is the last segment of the path');
  assert.equal(entry.isDir, false, `${path} is not a folder`);
  assert.equal(entry.size, size, `${path} size`);
  assertNearNow(entry.modTime, path);
}

function assertFolderEntry(entry: Entry | undefined, path: string): void {
  assert.ok(entry, `no folder entry for ${path}`);
  assert.equal(entry.path, path, 'path is the whole path from the location root');
  assert.equal(entry.name, lastSegment(path), 'name is the last segment of the path');
  assert.equal(entry.isDir, true, `${path} is a folder`);
  assert.equal(entry.size, 0, 'folders have size 0');
}

function byPath(entries: Entry[]): Map<string, Entry> {
  const map = new Map<string, Entry>();
  for (const entry of entries) {
    assert.ok(!map.has(entry.path), `entry ${entry.path} listed more than once`);
    assert.ok(
      !entry.path.startsWith('/') && !entry.path.endsWith('/'),
      `path "${entry.path}" has no edge "/"`,
    );
    map.set(entry.path, entry);
  }
  return map;
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  });
  await Promise.all(runners);
}

/** A size that takes the chunked path and spans more than one part. */
function largeSize(store: Store): number {
  const { minPartSize, singleRequestMax } = store.features.upload;
  return Math.max(singleRequestMax, minPartSize) + Math.ceil(minPartSize / 2) + 7;
}

/** Names that must round-trip exactly (docs/api.md, "Copy": paths are exact bytes, never normalised). */
const NAMES: { label: string; name: string; skipKey?: ConformanceCase }[] = [
  { label: 'spaces', name: 'with  two spaces and end.txt' },
  { label: 'plus', name: 'a+b+c.txt' },
  { label: 'percent', name: '100% and %20 literal %2F.txt' },
  { label: 'hash', name: 'issue #42.txt' },
  { label: 'query characters', name: 'what?a=1&b=2.txt', skipKey: 'names-question' },
  { label: 'ampersand and equals', name: 'a=1&b=2.txt' },
  { label: 'other punctuation', name: "semi;colon,comma@at$dollar!bang'quote(paren)[bracket]~tilde.txt" },
  { label: 'unicode', name: 'héllo wörld 日本語 🚀.txt' },
  { label: 'NFD unicode', name: 'cafe\u0301 (decomposed).txt', skipKey: 'names-nfd' },
  {
    label: 'reserved characters',
    name: 'star*colon:lt<gt>pipe|dq"back\\slash.txt',
    skipKey: 'names-reserved',
  },
];

// ---------------------------------------------------------------------------------------------
// The suite

export function describeConformance(name: string, makeHarness: () => Promise<ConformanceHarness>): void {
  describe(`${name} store conformance`, () => {
    let h: ConformanceHarness;
    let store: Store;
    const at = (...parts: string[]) => join(h.base, ...parts);
    const skipped = (key: ConformanceCase): string | undefined => h.skip?.[key];

    before(async () => {
      h = await makeHarness();
      store = h.store;
    });

    after(async () => {
      await h?.close();
    });

    // --- what the provider declares ------------------------------------------------------------

    // GET /v1/providers serves the declaration (src/stores/*/declaration.ts); the store must be it.
    test('the store has the features and hash kinds its provider declares', () => {
      const declared = declarationOf(store.provider);
      const f = store.features;
      assert.deepEqual(
        {
          bucketListing: f.bucketListing,
          hashes: [...f.hashes],
          copy: f.copy !== undefined,
          move: f.move !== undefined,
          resumable: f.resumable !== undefined,
          createBucket: f.createBucket !== undefined,
        },
        {
          bucketListing: declared.features.bucketListing,
          hashes: [...declared.hashes],
          copy: declared.features.copy,
          move: declared.features.move,
          resumable: declared.features.resumable,
          createBucket: declared.features.createBucket,
        },
      );
    });

    // --- round trips ---------------------------------------------------------------------------

    // First, while the base is still fresh.
    test('a fresh bucket or base folder lists as no entries', async () => {
      assert.deepEqual(await collect(store.list(h.base)), []);
      assert.deepEqual(await collect(store.list(h.base, { recursive: true })), []);
    });

    test('a written object stats and reads back with the same bytes', async () => {
      const path = at('round-trip', 'hello.txt');
      const data = 'hello, ferry\n';
      const info = await store.write(path, bodyOf(data), { size: data.length, mimeType: 'text/plain' });
      assert.equal(info.path, path, 'write returns the object path');
      assert.equal(info.size, data.length, 'write returns the stored size');
      const stat = await store.stat(path);
      assert.equal(stat.path, path);
      assert.equal(stat.size, data.length);
      assertNearNow(stat.modTime, path);
      assert.equal((await readAll(await store.read(path))).toString(), data);
    });

    test('a write without a declared size stores the whole stream', async () => {
      const path = at('unknown-size', 'data.bin');
      const data = Buffer.from('x'.repeat(100_000));
      const body = Readable.from([data.subarray(0, 40_000), data.subarray(40_000)]);
      const info = await store.write(path, body);
      assert.equal(info.size, data.length);
      assert.equal((await store.stat(path)).size, data.length);
      assert.deepEqual(await readAll(await store.read(path)), data);
    });

    test('a second write replaces the object', async () => {
      const path = at('overwrite', 'file.txt');
      await store.write(path, bodyOf('first version'), { size: 13 });
      await store.write(path, bodyOf('second'), { size: 6 });
      assert.equal((await store.stat(path)).size, 6);
      assert.equal((await readAll(await store.read(path))).toString(), 'second');
    });

    test('a 0-byte object round-trips', async () => {
      const path = at('empty-object', 'zero.bin');
      const info = await store.write(path, bodyOf(''), { size: 0 });
      assert.equal(info.size, 0);
      assert.equal((await store.stat(path)).size, 0);
      assert.equal((await readAll(await store.read(path))).length, 0);
      const listed = byPath(await collect(store.list(at('empty-object'))));
      assertFileEntry(listed.get(path), path, 0);
    });

    test('reported hashes match the content', async () => {
      const path = at('hashes', 'hashed.txt');
      const data = Buffer.from('content whose hashes the provider reports\n');
      await store.write(path, bodyOf(data), { size: data.length });
      const { hashes } = await store.stat(path);
      for (const kind of ['md5', 'sha1', 'sha256'] as const) {
        if (!store.features.hashes.includes(kind)) continue;
        assert.equal(hashes[kind], createHash(kind).update(data).digest('hex'), `${kind} of a small object`);
      }
    });

    test('a listing reports every hash kind its provider declares for listings, equal to the stat', async () => {
      const path = at('listed-hashes', 'hashed.txt');
      const data = Buffer.from('content whose hashes the listing reports\n');
      await store.write(path, bodyOf(data), { size: data.length });
      const entry = byPath(await collect(store.list(at('listed-hashes')))).get(path);
      assert.ok(entry, 'the object is listed');
      // A sync compares by these with no request per object (src/engine/sync-plan.ts). A listing may
      // report more than is declared (b2's ETag, which the S3 store reads as an MD5, is not trusted for
      // a checksum sync: docs/api.md, "Sync"), never less.
      const { hashes } = await store.stat(path);
      for (const kind of declarationOf(store.provider).listingHashes) {
        assert.ok(entry.hashes?.[kind], `${kind} listed`);
        assert.equal(entry.hashes?.[kind], hashes[kind], `${kind} listed and stat'ed`);
      }
    });

    // --- large objects -----------------------------------------------------------------------------

    const large = (title: string, fn: () => Promise<void>) =>
      test(title, async (t) => {
        const reason = skipped('large-objects');
        if (reason) return t.skip(reason);
        await fn();
      });

    large('an object larger than one upload part round-trips with its size declared', async () => {
      const size = largeSize(store);
      const path = at('large', 'declared.bin');
      const progress: number[] = [];
      const info = await store.write(path, patternStream(size, 1), {
        size,
        onProgress: (done) => progress.push(done),
      });
      assert.equal(info.size, size);
      assert.equal((await store.stat(path)).size, size);
      assert.deepEqual(await sha256Of(await store.read(path)), await patternSha256(size, 1));
      assert.ok(progress.length > 0, 'onProgress is called');
      assert.equal(progress.at(-1), size, 'the last progress report is the whole size');
      for (let i = 1; i < progress.length; i++) {
        assert.ok((progress[i] as number) >= (progress[i - 1] as number), 'progress is cumulative');
      }
    });

    large('an object larger than one upload part round-trips without a declared size', async () => {
      const size = largeSize(store) + 3;
      const path = at('large', 'undeclared.bin');
      const info = await store.write(path, patternStream(size, 2));
      assert.equal(info.size, size);
      assert.equal((await store.stat(path)).size, size);
      assert.deepEqual(await sha256Of(await store.read(path)), await patternSha256(size, 2));
    });

    large(
      'a large write whose stream is shorter than the declared size fails and leaves nothing',
      async () => {
        const size = largeSize(store);
        const path = at('large', 'short.bin');
        await assert.rejects(store.write(path, patternStream(size - 1, 3), { size }));
        await expectKind(store.stat(path), 'not_found', 'stat after a failed write');
      },
    );

    // --- ranges ---------------------------------------------------------------------------------------

    test('a ranged read returns exactly the requested bytes', async () => {
      const path = at('ranges', 'digits.txt');
      const data = '0123456789abcdefghijklmnopqrstuvwxyz';
      await store.write(path, bodyOf(data), { size: data.length });
      const read = async (offset: number, length?: number) =>
        (
          await readAll(
            await store.read(path, { range: length === undefined ? { offset } : { offset, length } }),
          )
        ).toString();
      assert.equal(await read(0, 1), '0');
      assert.equal(await read(10, 5), 'abcde');
      assert.equal(await read(30), 'uvwxyz', 'an offset without a length reads to the end');
      assert.equal(await read(0), data);
      assert.equal(await read(35, 1), 'z', 'the last byte alone');
      assert.equal(await read(30, 100), 'uvwxyz', 'a length past the end stops at the end');
    });

    // --- names ----------------------------------------------------------------------------------------

    for (const { label, name: fileName, skipKey } of NAMES) {
      test(`a name with ${label} round-trips exactly through write, stat, list and read`, async (t) => {
        const reason = skipKey ? skipped(skipKey) : undefined;
        if (reason) return t.skip(reason);
        const dir = at('names', label.replaceAll(' ', '-'));
        const path = join(dir, fileName);
        const data = `name: ${fileName}`;
        const size = Buffer.byteLength(data);
        await store.write(path, bodyOf(data), { size });
        assert.equal((await store.stat(path)).size, size);
        assert.equal((await readAll(await store.read(path))).toString(), data);
        const entries = await collect(store.list(dir));
        assert.deepEqual(
          entries.map((e) => e.name),
          [fileName],
          'listed under the exact name',
        );
        assertFileEntry(entries[0], path, size);
        await store.delete(path);
        await expectKind(store.stat(path), 'not_found', 'stat after delete');
        // The same name as a folder segment (once the file is gone: folder stores cannot hold a file
        // and a folder of one name side by side).
        const nested = join(dir, fileName, 'inner.txt');
        await store.write(nested, bodyOf('inner'), { size: 5 });
        assert.equal((await readAll(await store.read(nested))).toString(), 'inner');
        const folders = await collect(store.list(dir));
        assert.deepEqual(
          folders.map((e) => [e.name, e.isDir]),
          [[fileName, true]],
          'listed as a folder under the exact name',
        );
      });
    }

    // --- missing things ---------------------------------------------------------------------------

    test('stat, read and delete of a missing object answer not_found', async () => {
      const path = at('missing', 'nothing-here.txt');
      await expectKind(store.stat(path), 'not_found', 'stat');
      await expectKind(store.read(path), 'not_found', 'read');
      await expectKind(store.delete(path), 'not_found', 'delete');
    });

    test('listing a missing folder answers not_found', async () => {
      await expectKind(collect(store.list(at('no-such-folder'))), 'not_found', 'list');
      await expectKind(
        collect(store.list(at('no-such-folder', 'deeper'), { recursive: true })),
        'not_found',
        'recursive list',
      );
    });

    test('listing a missing bucket answers not_found', async (t) => {
      if (!store.features.bucketListing) return t.skip('not a bucket store');
      const bucket = `ferry-missing-${Date.now().toString(36)}`;
      await expectKind(collect(store.list(bucket)), 'not_found', 'list of a missing bucket');
      await expectKind(store.stat(join(bucket, 'a.txt')), 'not_found', 'stat in a missing bucket');
    });

    // --- folders and listing ----------------------------------------------------------------------

    test('a listing shows immediate children only, folders with size 0', async () => {
      const dir = at('listing');
      const files = ['a.txt', 'sub/b.txt', 'sub/deeper/c.txt', 'sub2/d.txt'];
      for (const f of files) await store.write(join(dir, f), bodyOf(f), { size: f.length });
      const entries = byPath(await collect(store.list(dir)));
      assert.deepEqual([...entries.keys()].sort(), [join(dir, 'a.txt'), join(dir, 'sub'), join(dir, 'sub2')]);
      assertFileEntry(entries.get(join(dir, 'a.txt')), join(dir, 'a.txt'), 'a.txt'.length);
      assertFolderEntry(entries.get(join(dir, 'sub')), join(dir, 'sub'));
      assertFolderEntry(entries.get(join(dir, 'sub2')), join(dir, 'sub2'));
    });

    test('a recursive listing yields every object and every folder once', async () => {
      const dir = at('listing-recursive');
      const files = ['a.txt', 'sub/b.txt', 'sub/deeper/c.txt', 'sub/deeper/c2.txt', 'sub2/d.txt'];
      for (const f of files) await store.write(join(dir, f), bodyOf(f), { size: f.length });
      const entries = byPath(await collect(store.list(dir, { recursive: true })));
      const folders = ['sub', 'sub/deeper', 'sub2'];
      assert.deepEqual([...entries.keys()].sort(), [...files, ...folders].map((p) => join(dir, p)).sort());
      for (const f of files) assertFileEntry(entries.get(join(dir, f)), join(dir, f), f.length);
      for (const f of folders) assertFolderEntry(entries.get(join(dir, f)), join(dir, f));
    });

    test('a nested folder lists its own children with paths from the location root', async () => {
      const dir = at('nested');
      await store.write(join(dir, 'x/y/z/leaf.txt'), bodyOf('leaf'), { size: 4 });
      const entries = await collect(store.list(join(dir, 'x/y')));
      assert.equal(entries.length, 1);
      assertFolderEntry(entries[0], join(dir, 'x/y/z'));
      const leaf = await collect(store.list(join(dir, 'x/y/z')));
      assert.equal(leaf.length, 1);
      assertFileEntry(leaf[0], join(dir, 'x/y/z/leaf.txt'), 4);
    });

    test('an empty folder lists as no entries and shows in its parent', async (t) => {
      const makeFolder = h.makeFolder?.bind(h);
      if (!makeFolder) return t.skip(skipped('empty-folders') ?? 'the harness cannot create empty folders');
      const dir = at('empty-folder');
      await store.write(join(dir, 'sibling.txt'), bodyOf('s'), { size: 1 });
      await makeFolder(join(dir, 'hollow'));
      assert.deepEqual(await collect(store.list(join(dir, 'hollow'))), []);
      assert.deepEqual(await collect(store.list(join(dir, 'hollow'), { recursive: true })), []);
      const parent = byPath(await collect(store.list(dir)));
      assertFolderEntry(parent.get(join(dir, 'hollow')), join(dir, 'hollow'));
      const recursive = byPath(await collect(store.list(dir, { recursive: true })));
      assert.deepEqual([...recursive.keys()].sort(), [join(dir, 'hollow'), join(dir, 'sibling.txt')]);
    });

    test('a listing crosses page boundaries and yields every entry once', async (t) => {
      const reason = skipped('pagination');
      if (reason) return t.skip(reason);
      const dir = at('paging');
      const count = h.pageSize + 1;
      const names = Array.from({ length: count }, (_, i) => `obj-${String(i).padStart(5, '0')}`);
      // All in one folder, so the folder's objects span pages in a recursive listing too.
      await pool(names, 8, (n) => store.write(join(dir, 'd', n), bodyOf(n), { size: n.length }));
      await store.write(join(dir, 'top.txt'), bodyOf('top'), { size: 3 });

      const flat = byPath(await collect(store.list(join(dir, 'd'))));
      assert.equal(flat.size, count, 'every object of the folder, once');
      for (const n of names) assertFileEntry(flat.get(join(dir, 'd', n)), join(dir, 'd', n), n.length);

      const recursive = byPath(await collect(store.list(dir, { recursive: true })));
      assert.equal(recursive.size, count + 2, 'the objects, top.txt and the folder d, each once');
      assertFolderEntry(recursive.get(join(dir, 'd')), join(dir, 'd'));

      const top = byPath(await collect(store.list(dir)));
      assert.deepEqual([...top.keys()].sort(), [join(dir, 'd'), join(dir, 'top.txt')]);
    });

    test('an empty path lists buckets with size -1', async (t) => {
      if (!store.features.bucketListing) return t.skip('the store has no bucket listing');
      const buckets = byPath(await collect(store.list('')));
      const bucket = h.base.split('/')[0] as string;
      const entry = buckets.get(bucket);
      assert.ok(entry, `bucket ${bucket} is listed`);
      assert.equal(entry.name, bucket);
      assert.equal(entry.size, -1, 'buckets have size -1');
      assert.equal(entry.isDir, true);
    });

    // --- bucket creation (docs/api.md, "Buckets") -----------------------------------------------------

    test('bucket stores, and only they, declare bucket creation', () => {
      assert.equal(store.features.createBucket !== undefined, store.features.bucketListing);
    });

    test('a created bucket lists at the root and empty, takes objects, and a second create is conflict', async (t) => {
      const creation = store.features.createBucket;
      if (!creation) return t.skip('a folder store has no buckets');
      const name = `ferry-mb-${randomBytes(5).toString('hex')}`;
      const entry = await creation.create(name);
      assert.deepEqual(
        { name: entry.name, path: entry.path, size: entry.size, isDir: entry.isDir },
        { name, path: name, size: -1, isDir: true },
      );
      assert.ok(byPath(await collect(store.list(''))).has(name), 'the new bucket is listed at the root');
      assert.deepEqual(await collect(store.list(name)), [], 'the new bucket is empty');
      await store.write(join(name, 'first.txt'), bodyOf('one'), { size: 3 });
      assert.equal((await store.stat(join(name, 'first.txt'))).size, 3);
      const again = (await expectKind(creation.create(name), 'conflict', 'a second create')) as Error;
      assert.match(again.message, new RegExp(name));
      assert.equal((await store.stat(join(name, 'first.txt'))).size, 3, 'the bucket is untouched');
    });

    test('a bucket name the provider refuses is invalid, naming the rule, before any request', async (t) => {
      const creation = store.features.createBucket;
      if (!creation) return t.skip('a folder store has no buckets');
      for (const name of ['ab', 'has space', 'bang!', `x${'y'.repeat(230)}`]) {
        assert.throws(
          () => creation.checkName(name),
          (err: unknown) => isFerryError(err, 'invalid') && /names (are|hold|begin|have)/.test(err.message),
          name,
        );
        // create() checks first: against a store whose server would refuse anything, still invalid.
        await expectKind(creation.create(name), 'invalid', `create ${name}`);
      }
      const bad = await h.rejectedStore().catch(() => undefined);
      if (bad?.features.createBucket) {
        try {
          await expectKind(
            bad.features.createBucket.create('Not Valid'),
            'invalid',
            'checked before the request',
          );
        } finally {
          await bad.close();
        }
      }
    });

    // --- delete -------------------------------------------------------------------------------------

    test('a deleted object is gone and a second delete answers not_found', async () => {
      const path = at('delete', 'doomed.txt');
      await store.write(path, bodyOf('bye'), { size: 3 });
      await store.write(at('delete', 'keeper.txt'), bodyOf('stay'), { size: 4 });
      await store.delete(path);
      await expectKind(store.stat(path), 'not_found', 'stat after delete');
      await expectKind(store.read(path), 'not_found', 'read after delete');
      await expectKind(store.delete(path), 'not_found', 'second delete');
      const left = await collect(store.list(at('delete')));
      assert.deepEqual(
        left.map((e) => e.path),
        [at('delete', 'keeper.txt')],
      );
    });

    // --- declared sizes ------------------------------------------------------------------------------

    test('a write whose stream is shorter than the declared size fails and leaves nothing', async () => {
      const path = at('wrong-size', 'short.txt');
      await assert.rejects(store.write(path, bodyOf('only ten b'), { size: 11 }));
      await expectKind(store.stat(path), 'not_found', 'stat after a failed write');
    });

    test('a write whose stream is longer than the declared size fails and leaves nothing', async () => {
      const path = at('wrong-size', 'long.txt');
      await assert.rejects(store.write(path, bodyOf('eleven byte'), { size: 10 }));
      await expectKind(store.stat(path), 'not_found', 'stat after a failed write');
    });

    // --- server-side copy and move --------------------------------------------------------------------

    test('a server-side copy duplicates the object and keeps the source', async (t) => {
      const copy = store.features.copy;
      if (!copy) return t.skip('the store declares no server-side copy');
      const from = at('copy', 'source with space+plus%25#.txt');
      const to = at('copy', 'sub', 'dést&ination #.txt');
      await store.write(from, bodyOf('copied bytes'), { size: 12 });
      const info: ObjectInfo = await copy(from, to);
      assert.equal(info.path, to);
      assert.equal(info.size, 12);
      assert.equal((await readAll(await store.read(to))).toString(), 'copied bytes');
      assert.equal((await readAll(await store.read(from))).toString(), 'copied bytes', 'the source stays');
      await expectKind(
        copy(at('copy', 'missing.txt'), at('copy', 'x.txt')),
        'not_found',
        'copy of a missing object',
      );
    });

    test('a server-side move leaves the object only at the destination', async (t) => {
      const move = store.features.move;
      if (!move) return t.skip('the store declares no server-side move');
      const from = at('move', 'from #1+é.txt');
      const to = at('move', 'sub', 'to %.txt');
      await store.write(from, bodyOf('moved'), { size: 5 });
      const info = await move(from, to);
      assert.equal(info.path, to);
      assert.equal(info.size, 5);
      assert.equal((await readAll(await store.read(to))).toString(), 'moved');
      await expectKind(store.stat(from), 'not_found', 'the source is gone');
      await expectKind(
        move(at('move', 'missing.txt'), at('move', 'x.txt')),
        'not_found',
        'move of a missing object',
      );
    });

    // --- provider answers: throttling and rejected credentials ---------------------------------------

    const throttled = async (what: string, call: () => Promise<unknown>) => {
      h.throttleNext(1);
      const err = (await expectKind(call(), 'throttled', what)) as { retryAfterSeconds?: number };
      assert.equal(typeof err.retryAfterSeconds, 'number', `${what}: the provider's Retry-After is kept`);
      assert.ok((err.retryAfterSeconds as number) >= 0);
      if (h.throttleRetryAfterSeconds !== undefined) {
        assert.equal(err.retryAfterSeconds, h.throttleRetryAfterSeconds, `${what}: Retry-After seconds`);
      }
    };

    test('a throttle answer surfaces as throttled with the retry-after, and the next call succeeds', async (t) => {
      const reason = skipped('throttling');
      if (reason) return t.skip(reason);
      const path = at('throttle', 'file.txt');
      await store.write(path, bodyOf('data'), { size: 4 });
      await throttled('stat', () => store.stat(path));
      assert.equal((await store.stat(path)).size, 4, 'the call after the throttle succeeds');
      await throttled('read', () => store.read(path).then(readAll));
      await throttled('list', () => collect(store.list(at('throttle'))));
      await throttled('write', () => store.write(at('throttle', 'new.txt'), bodyOf('n'), { size: 1 }));
      await throttled('delete', () => store.delete(path));
      assert.equal((await readAll(await store.read(path))).toString(), 'data', 'nothing was lost');
    });

    test('rejected credentials surface as credentials_rejected on every call', async (t) => {
      const reason = skipped('rejected-credentials');
      if (reason) return t.skip(reason);
      const path = at('rejected', 'file.txt');
      await store.write(path, bodyOf('data'), { size: 4 });
      const bad = await h.rejectedStore();
      try {
        await expectKind(bad.stat(path), 'credentials_rejected', 'stat');
        await expectKind(bad.read(path), 'credentials_rejected', 'read');
        await expectKind(collect(bad.list(at('rejected'))), 'credentials_rejected', 'list');
        await expectKind(
          bad.write(at('rejected', 'new.txt'), bodyOf('n'), { size: 1 }),
          'credentials_rejected',
          'write',
        );
        await expectKind(bad.delete(path), 'credentials_rejected', 'delete');
        const err = await expectKind(
          bad.stat(at('rejected', 'missing.txt')),
          'credentials_rejected',
          'stat of a missing object',
        );
        const text = `${String(err)}\n${(err as Error).stack ?? ''}`;
        for (const secret of h.secretValues ?? []) {
          assert.ok(!text.includes(secret), 'an error message never contains a secret');
        }
      } finally {
        await bad.close();
      }
      assert.equal((await store.stat(path)).size, 4, 'the object is untouched');
    });
  });
}
