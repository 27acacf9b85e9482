// copyObject against s3rver and azurite: server-side within one account, streamed across accounts and
// providers (multipart on both sides for 12 MiB), verified, and classified when it goes wrong.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { FerryError, isFerryError } from '../../src/errors.js';
import { copyObject } from '../../src/objects/object-copy.js';
import { get, MiB, override, put, type Servers, sha256, startServers, withoutChecksums } from './harness.js';

let servers: Servers;

before(async () => {
  servers = await startServers();
});

after(async () => {
  await servers?.close();
});

const BIG = randomBytes(12 * MiB + 12345);
const SMALL = randomBytes(200 * 1024);
const EMPTY = Buffer.alloc(0);

describe('copyObject: the method', () => {
  test('two S3 locations with the same account copy server-side, intact (12 MiB, small, 0 bytes)', async () => {
    const a = servers.s3();
    const b = servers.s3(); // another location, same key and endpoint: the same account
    const [from, to] = [await servers.newBucket(), await servers.newBucket()];
    for (const [name, data] of [
      ['big.bin', BIG],
      ['small.bin', SMALL],
      ['empty.bin', EMPTY],
    ] as const) {
      await put(a, `${from}/dir/${name}`, data);
      const progress: number[] = [];
      const outcome = await copyObject({
        source: a,
        sourcePath: `${from}/dir/${name}`,
        destination: b,
        destinationPath: `${to}/copied/${name}`,
        onProgress: (n) => progress.push(n),
      });
      assert.deepEqual(
        withoutChecksums(outcome, data),
        {
          action: 'copied',
          method: 'server-side',
          bytes: data.length,
          // A server-side copy is proven by a hash both objects report (docs/api.md, "Verification").
          verified: outcome.checksums === undefined ? [] : ['md5'],
        },
        name,
      );
      assert.equal(sha256(await get(b, `${to}/copied/${name}`)), sha256(data), name);
      assert.equal(progress.at(-1), data.length);
    }
  });

  test('S3 to azureblob streams, intact, multipart on both sides; progress is cumulative', async () => {
    const s3 = servers.s3();
    const azure = servers.azure();
    const [bucket, container] = [await servers.newBucket(), await servers.newContainer()];
    for (const [name, data] of [
      ['big.bin', BIG],
      ['small.bin', SMALL],
      ['empty.bin', EMPTY],
    ] as const) {
      await put(s3, `${bucket}/${name}`, data);
      const progress: number[] = [];
      const outcome = await copyObject({
        source: s3,
        sourcePath: `${bucket}/${name}`,
        destination: azure,
        destinationPath: `${container}/in/${name}`,
        onProgress: (n) => progress.push(n),
      });
      assert.deepEqual(
        withoutChecksums(outcome, data),
        // Azure's blocks (and a Put Blob's answer) carry the MD5 of the bytes sent.
        { action: 'copied', method: 'stream', bytes: data.length, verified: ['md5'] },
        name,
      );
      assert.equal(sha256(await get(azure, `${container}/in/${name}`)), sha256(data), name);
      assert.deepEqual(
        progress,
        [...progress].sort((x, y) => x - y),
        'progress never goes back',
      );
      if (data.length > 0) assert.equal(progress.at(-1), data.length);
      assert.equal((await azure.stat(`${container}/in/${name}`)).size, data.length);
    }
  });

  test('azureblob to S3 streams, intact (a 12 MiB object becomes an S3 multipart upload)', async () => {
    const s3 = servers.s3();
    const azure = servers.azure();
    const [bucket, container] = [await servers.newBucket(), await servers.newContainer()];
    await put(azure, `${container}/big.bin`, BIG);
    const outcome = await copyObject({
      source: azure,
      sourcePath: `${container}/big.bin`,
      destination: s3,
      destinationPath: `${bucket}/from-azure/big.bin`,
    });
    assert.deepEqual(withoutChecksums(outcome, BIG), {
      action: 'copied',
      method: 'stream',
      bytes: BIG.length,
      // The S3 multipart ETag of the parts sent.
      verified: ['md5'],
    });
    assert.equal(sha256(await get(s3, `${bucket}/from-azure/big.bin`)), sha256(BIG));
  });

  test('two S3 locations with different keys (different accounts) stream, even on one server', async () => {
    const a = servers.s3('FERRYKEYA');
    const b = servers.s3('FERRYKEYB');
    assert.notEqual(a.account, b.account);
    const bucket = await servers.newBucket();
    await put(a, `${bucket}/name with spaces+%#?.bin`, SMALL);
    const outcome = await copyObject({
      source: a,
      sourcePath: `${bucket}/name with spaces+%#?.bin`,
      destination: b,
      destinationPath: `${bucket}/copy é.bin`,
    });
    assert.equal(outcome.method, 'stream');
    assert.equal(sha256(await get(b, `${bucket}/copy é.bin`)), sha256(SMALL));
  });

  test('a server-side copy the provider cannot do (unsupported) falls back to streaming', async () => {
    const a = servers.s3();
    const b = override(servers.s3(), {
      features: {
        copy: async () => {
          throw new FerryError('unsupported', 'copy: NotImplemented');
        },
      },
    });
    const bucket = await servers.newBucket();
    await put(a, `${bucket}/x.bin`, SMALL);
    const outcome = await copyObject({
      source: a,
      sourcePath: `${bucket}/x.bin`,
      destination: b,
      destinationPath: `${bucket}/y.bin`,
    });
    assert.equal(outcome.method, 'stream');
    assert.equal(sha256(await get(a, `${bucket}/y.bin`)), sha256(SMALL));
  });

  test('sourceInfo from a listing saves the stat', async () => {
    const s3 = servers.s3();
    const bucket = await servers.newBucket();
    await put(s3, `${bucket}/x.bin`, SMALL);
    const info = await s3.stat(`${bucket}/x.bin`);
    let stats = 0;
    const counted = override(s3, {
      stat: (path, options) => {
        stats++;
        return s3.stat(path, options);
      },
    });
    await copyObject({
      source: counted,
      sourcePath: `${bucket}/x.bin`,
      destination: servers.azure(),
      destinationPath: `${await servers.newContainer()}/x.bin`,
      sourceInfo: info,
    });
    assert.equal(stats, 0);
  });
});

describe('copyObject: overwrite and missing objects', () => {
  test("overwrite 'if-missing' skips an existing destination and copies a missing one", async () => {
    const s3 = servers.s3();
    const azure = servers.azure();
    const [bucket, container] = [await servers.newBucket(), await servers.newContainer()];
    await put(s3, `${bucket}/a.bin`, SMALL);
    const old = randomBytes(10);
    await put(azure, `${container}/a.bin`, old);
    const args = { source: s3, sourcePath: `${bucket}/a.bin`, destination: azure } as const;
    assert.deepEqual(
      await copyObject({ ...args, destinationPath: `${container}/a.bin`, overwrite: 'if-missing' }),
      { action: 'skipped', bytes: 0 },
    );
    assert.deepEqual(await get(azure, `${container}/a.bin`), old);
    const copied = await copyObject({
      ...args,
      destinationPath: `${container}/b.bin`,
      overwrite: 'if-missing',
    });
    assert.equal(copied.action, 'copied');
    // 'always' (the default) replaces.
    await copyObject({ ...args, destinationPath: `${container}/a.bin` });
    assert.equal(sha256(await get(azure, `${container}/a.bin`)), sha256(SMALL));
  });

  test("overwrite 'if-missing' skips server-side too", async () => {
    const a = servers.s3();
    const bucket = await servers.newBucket();
    await put(a, `${bucket}/a.bin`, SMALL);
    await put(a, `${bucket}/b.bin`, EMPTY);
    const outcome = await copyObject({
      source: a,
      sourcePath: `${bucket}/a.bin`,
      destination: servers.s3(),
      destinationPath: `${bucket}/b.bin`,
      overwrite: 'if-missing',
    });
    assert.equal(outcome.action, 'skipped');
    assert.equal((await a.stat(`${bucket}/b.bin`)).size, 0);
  });

  test('a missing source is the store’s not_found, on both paths', async () => {
    const bucket = await servers.newBucket();
    for (const destination of [servers.s3(), servers.azure()]) {
      await assert.rejects(
        copyObject({
          source: servers.s3(),
          sourcePath: `${bucket}/nothing.bin`,
          destination,
          destinationPath: `${bucket}/x.bin`,
        }),
        (err: unknown) => isFerryError(err, 'not_found'),
      );
    }
  });

  test('copying an object onto itself is invalid', async () => {
    const s3 = servers.s3();
    const bucket = await servers.newBucket();
    await put(s3, `${bucket}/a.bin`, SMALL);
    await assert.rejects(
      copyObject({
        source: s3,
        sourcePath: `${bucket}/a.bin`,
        destination: servers.s3(),
        destinationPath: `${bucket}/a.bin`,
      }),
      (err: unknown) => isFerryError(err, 'invalid'),
    );
    assert.equal(sha256(await get(s3, `${bucket}/a.bin`)), sha256(SMALL));
  });
});

describe('copyObject: verification and faults', () => {
  test('a source that ends early (a truncating server) is transient and leaves no destination object', async () => {
    const s3 = servers.s3();
    const azure = servers.azure();
    const [bucket, container] = [await servers.newBucket(), await servers.newContainer()];
    await put(s3, `${bucket}/a.bin`, SMALL);
    // What a proxy that shortens the body and its Content-Length to match would give the store.
    const truncating = override(s3, {
      read: async () => Readable.from([SMALL.subarray(0, SMALL.length - 100)]),
    });
    await assert.rejects(
      copyObject({
        source: truncating,
        sourcePath: `${bucket}/a.bin`,
        destination: azure,
        destinationPath: `${container}/a.bin`,
      }),
      (err: unknown) => {
        assert.ok(isFerryError(err, 'transient'), String(err));
        assert.match(err.message, /ended after \d+ of \d+ bytes/);
        return true;
      },
    );
    await assert.rejects(azure.stat(`${container}/a.bin`), (err: unknown) => isFerryError(err, 'not_found'));
  });

  test('a destination that reports another hash fails verification: transient, and the object is removed', async () => {
    const s3 = servers.s3();
    const azure = servers.azure();
    const [bucket, container] = [await servers.newBucket(), await servers.newContainer()];
    await put(s3, `${bucket}/a.bin`, SMALL);
    assert.ok(
      (await s3.stat(`${bucket}/a.bin`)).hashes.md5,
      's3rver reports an MD5 for a single-part object',
    );
    const lying = override(azure, {
      write: async (path, body, options) => {
        const info = await azure.write(path, body, options);
        return { ...info, hashes: { md5: '0'.repeat(32) } };
      },
    });
    await assert.rejects(
      copyObject({
        source: s3,
        sourcePath: `${bucket}/a.bin`,
        destination: lying,
        destinationPath: `${container}/a.bin`,
      }),
      (err: unknown) => {
        assert.ok(isFerryError(err, 'transient'), String(err));
        assert.match(err.message, /verification failed: the md5 .* differs.*was removed/);
        return true;
      },
    );
    await assert.rejects(azure.stat(`${container}/a.bin`), (err: unknown) => isFerryError(err, 'not_found'));
  });

  test('a server-side copy whose result has the wrong size fails verification and is removed', async () => {
    const a = servers.s3();
    const b = servers.s3();
    const bucket = await servers.newBucket();
    await put(a, `${bucket}/a.bin`, SMALL);
    const copy = b.features.copy;
    assert.ok(copy);
    const short = override(b, {
      features: { copy: async (from, to, options) => ({ ...(await copy(from, to, options)), size: 1 }) },
    });
    await assert.rejects(
      copyObject({
        source: a,
        sourcePath: `${bucket}/a.bin`,
        destination: short,
        destinationPath: `${bucket}/b.bin`,
      }),
      (err: unknown) => isFerryError(err, 'transient') && /holds 1 bytes/.test(err.message),
    );
    await assert.rejects(a.stat(`${bucket}/b.bin`), (err: unknown) => isFerryError(err, 'not_found'));
  });

  test('a connection dropped mid-object is transient and leaves no destination object', async () => {
    const source = servers.s3('FERRYKEYA', { viaProxy: true });
    const azure = servers.azure();
    const [bucket, container] = [await servers.newBucket(), await servers.newContainer()];
    await put(source, `${bucket}/big.bin`, BIG);
    const info = await source.stat(`${bucket}/big.bin`);
    servers.s3Proxy.dropNext(1); // the GET: headers and part of the body, then the cut
    try {
      await assert.rejects(
        copyObject({
          source,
          sourcePath: `${bucket}/big.bin`,
          destination: azure,
          destinationPath: `${container}/big.bin`,
          sourceInfo: info,
        }),
        (err: unknown) => isFerryError(err, 'transient'),
      );
    } finally {
      servers.s3Proxy.reset();
    }
    await assert.rejects(azure.stat(`${container}/big.bin`), (err: unknown) =>
      isFerryError(err, 'not_found'),
    );
    // And the next attempt succeeds.
    const outcome = await copyObject({
      source,
      sourcePath: `${bucket}/big.bin`,
      destination: azure,
      destinationPath: `${container}/big.bin`,
    });
    assert.equal(outcome.bytes, BIG.length);
    assert.equal(sha256(await get(azure, `${container}/big.bin`)), sha256(BIG));
  });

  test('a destination write failure is reported as the destination’s error', async () => {
    const s3 = servers.s3();
    const bucket = await servers.newBucket();
    await put(s3, `${bucket}/a.bin`, SMALL);
    await assert.rejects(
      copyObject({
        source: s3,
        sourcePath: `${bucket}/a.bin`,
        destination: servers.azure(),
        destinationPath: 'no-such-container/a.bin',
      }),
      (err: unknown) => isFerryError(err, 'not_found'),
    );
  });

  test('an abort stops a streamed copy', async () => {
    const s3 = servers.s3();
    const azure = servers.azure();
    const [bucket, container] = [await servers.newBucket(), await servers.newContainer()];
    await put(s3, `${bucket}/big.bin`, BIG);
    const controller = new AbortController();
    const slow = override(s3, {
      read: async () => {
        // A source that never ends: the copy can only stop by the abort.
        const body = new PassThrough();
        body.write(BIG.subarray(0, MiB));
        return body;
      },
    });
    const copying = copyObject({
      source: slow,
      sourcePath: `${bucket}/big.bin`,
      destination: azure,
      destinationPath: `${container}/big.bin`,
      signal: controller.signal,
      onProgress: (n) => {
        if (n >= MiB) controller.abort();
      },
    });
    await assert.rejects(copying);
    await assert.rejects(azure.stat(`${container}/big.bin`), (err: unknown) =>
      isFerryError(err, 'not_found'),
    );
  });
});
