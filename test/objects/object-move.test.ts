// moveObject against s3rver and azurite: copy + verify + delete across providers both ways and within
// one S3 account (S3 and Azure have no rename), a provider's native move (a double over s3rver, as the
// folder stores that have one are tested against their fakes), repeats after a crash, and a source
// that cannot be deleted.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { FerryError, isFerryError } from '../../src/errors.js';
import { moveObject } from '../../src/objects/object-move.js';
import type { Store } from '../../src/stores/contract.js';
import { get, MiB, override, put, type Servers, sha256, startServers, withoutChecksums } from './harness.js';

let servers: Servers;

before(async () => {
  servers = await startServers();
});

after(async () => {
  await servers?.close();
});

const DATA = randomBytes(6 * MiB + 7);

async function gone(store: Store, path: string): Promise<void> {
  await assert.rejects(store.stat(path), (err: unknown) => isFerryError(err, 'not_found'));
}

/** A store with a native move, made of the real store's copy and delete (as a rename would behave). */
function withNativeMove(store: Store, calls: string[]): Store {
  const copy = store.features.copy;
  assert.ok(copy);
  return override(store, {
    features: {
      move: async (from, to, options) => {
        calls.push(`move ${from} ${to}`);
        const info = await copy(from, to, options);
        await store.delete(from, options);
        return info;
      },
    },
  });
}

describe('moveObject', () => {
  test('S3 to azureblob: copy, verify, delete; the object exists only at the destination', async () => {
    const s3 = servers.s3();
    const azure = servers.azure();
    const [bucket, container] = [await servers.newBucket(), await servers.newContainer()];
    await put(s3, `${bucket}/dir/a.bin`, DATA);
    const progress: number[] = [];
    const outcome = await moveObject({
      source: s3,
      sourcePath: `${bucket}/dir/a.bin`,
      destination: azure,
      destinationPath: `${container}/moved/a.bin`,
      onProgress: (n) => progress.push(n),
    });
    assert.deepEqual(withoutChecksums(outcome, DATA), {
      method: 'copy-delete',
      bytes: DATA.length,
      verified: ['md5'],
    });
    assert.equal(progress.at(-1), DATA.length);
    assert.equal(sha256(await get(azure, `${container}/moved/a.bin`)), sha256(DATA));
    await gone(s3, `${bucket}/dir/a.bin`);
  });

  test('azureblob to S3, the other way', async () => {
    const s3 = servers.s3();
    const azure = servers.azure();
    const [bucket, container] = [await servers.newBucket(), await servers.newContainer()];
    await put(azure, `${container}/b.bin`, DATA);
    const outcome = await moveObject({
      source: azure,
      sourcePath: `${container}/b.bin`,
      destination: s3,
      destinationPath: `${bucket}/b.bin`,
    });
    assert.deepEqual(withoutChecksums(outcome, DATA), {
      method: 'copy-delete',
      bytes: DATA.length,
      verified: ['md5'],
    });
    assert.equal(sha256(await get(s3, `${bucket}/b.bin`)), sha256(DATA));
    await gone(azure, `${container}/b.bin`);
  });

  test('within one S3 account (no rename): a server-side copy, then delete', async () => {
    const a = servers.s3();
    const b = servers.s3();
    const [from, to] = [await servers.newBucket(), await servers.newBucket()];
    await put(a, `${from}/c.bin`, DATA);
    const outcome = await moveObject({
      source: a,
      sourcePath: `${from}/c.bin`,
      destination: b,
      destinationPath: `${to}/c.bin`,
    });
    // Server-side, proven by a hash both objects report: a multipart ETag is none (size only).
    assert.deepEqual(withoutChecksums(outcome, DATA), {
      method: 'copy-delete',
      bytes: DATA.length,
      verified: [],
    });
    assert.equal(sha256(await get(b, `${to}/c.bin`)), sha256(DATA));
    await gone(a, `${from}/c.bin`);
  });

  test("the provider's native move is used when both stores share the account", async () => {
    const calls: string[] = [];
    const a = withNativeMove(servers.s3(), calls);
    const b = withNativeMove(servers.s3(), calls);
    const bucket = await servers.newBucket();
    await put(a, `${bucket}/d.bin`, DATA);
    const outcome = await moveObject({
      source: a,
      sourcePath: `${bucket}/d.bin`,
      destination: b,
      destinationPath: `${bucket}/e.bin`,
    });
    assert.deepEqual(withoutChecksums(outcome, DATA), { method: 'server-side', bytes: DATA.length });
    assert.deepEqual(calls, [`move ${bucket}/d.bin ${bucket}/e.bin`]);
    assert.equal(sha256(await get(b, `${bucket}/e.bin`)), sha256(DATA));
    await gone(a, `${bucket}/d.bin`);
  });

  test('a native move across accounts is not used: copy + delete', async () => {
    const calls: string[] = [];
    const a = withNativeMove(servers.s3('FERRYKEYA'), calls);
    const b = withNativeMove(servers.s3('FERRYKEYB'), calls);
    const bucket = await servers.newBucket();
    await put(a, `${bucket}/f.bin`, DATA);
    const outcome = await moveObject({
      source: a,
      sourcePath: `${bucket}/f.bin`,
      destination: b,
      destinationPath: `${bucket}/g.bin`,
    });
    assert.equal(outcome.method, 'copy-delete');
    assert.deepEqual(calls, []);
  });

  test('a native move the provider cannot do (unsupported) falls back to copy + delete', async () => {
    const refusing = (store: Store) =>
      override(store, {
        features: {
          move: async () => {
            throw new FerryError('unsupported', 'move: not for this object');
          },
        },
      });
    const a = refusing(servers.s3());
    const bucket = await servers.newBucket();
    await put(a, `${bucket}/h.bin`, DATA);
    const outcome = await moveObject({
      source: a,
      sourcePath: `${bucket}/h.bin`,
      destination: refusing(servers.s3()),
      destinationPath: `${bucket}/i.bin`,
    });
    assert.equal(outcome.method, 'copy-delete');
    await gone(a, `${bucket}/h.bin`);
  });
});

describe('moveObject: repeats and failures', () => {
  test('a repeat after the move completed (source gone, destination present) is done, not an error', async () => {
    const s3 = servers.s3();
    const azure = servers.azure();
    const [bucket, container] = [await servers.newBucket(), await servers.newContainer()];
    await put(s3, `${bucket}/r.bin`, DATA);
    const args = {
      source: s3,
      sourcePath: `${bucket}/r.bin`,
      destination: azure,
      destinationPath: `${container}/r.bin`,
    };
    await moveObject(args);
    assert.deepEqual(withoutChecksums(await moveObject(args), DATA), {
      method: 'copy-delete',
      bytes: DATA.length,
    });
    assert.equal(sha256(await get(azure, `${container}/r.bin`)), sha256(DATA));
  });

  test('a repeat after a crash between copy and delete copies again and deletes', async () => {
    const s3 = servers.s3();
    const azure = servers.azure();
    const [bucket, container] = [await servers.newBucket(), await servers.newContainer()];
    await put(s3, `${bucket}/s.bin`, DATA);
    await put(azure, `${container}/s.bin`, DATA.subarray(0, 1000)); // what a first run left
    const outcome = await moveObject({
      source: s3,
      sourcePath: `${bucket}/s.bin`,
      destination: azure,
      destinationPath: `${container}/s.bin`,
    });
    assert.equal(outcome.bytes, DATA.length);
    assert.equal(sha256(await get(azure, `${container}/s.bin`)), sha256(DATA));
    await gone(s3, `${bucket}/s.bin`);
  });

  test('a missing source with no destination is not_found', async () => {
    const bucket = await servers.newBucket();
    await assert.rejects(
      moveObject({
        source: servers.s3(),
        sourcePath: `${bucket}/none`,
        destination: servers.azure(),
        destinationPath: `${await servers.newContainer()}/none`,
      }),
      (err: unknown) => isFerryError(err, 'not_found'),
    );
  });

  test('a source that cannot be deleted is reported, with the delete’s kind, after a good copy', async () => {
    const s3 = servers.s3();
    const azure = servers.azure();
    const [bucket, container] = [await servers.newBucket(), await servers.newContainer()];
    await put(s3, `${bucket}/t.bin`, DATA);
    const locked = override(s3, {
      delete: async () => {
        throw new FerryError('forbidden', `delete ${bucket}/t.bin: AccessDenied (HTTP 403)`);
      },
    });
    await assert.rejects(
      moveObject({
        source: locked,
        sourcePath: `${bucket}/t.bin`,
        destination: azure,
        destinationPath: `${container}/t.bin`,
      }),
      (err: unknown) => {
        assert.ok(isFerryError(err, 'forbidden'), String(err));
        assert.match(
          err.message,
          /copied to the destination, but the source could not be deleted: .*AccessDenied/,
        );
        return true;
      },
    );
    assert.equal(sha256(await get(azure, `${container}/t.bin`)), sha256(DATA));
    assert.equal((await s3.stat(`${bucket}/t.bin`)).size, DATA.length, 'the source is still there');
  });

  test('a throttled source delete keeps throttled and its Retry-After, so the queue retries', async () => {
    const s3 = servers.s3();
    const bucket = await servers.newBucket();
    await put(s3, `${bucket}/u.bin`, DATA);
    const busy = override(s3, {
      delete: async () => {
        throw new FerryError('throttled', 'delete: SlowDown', { retryAfterSeconds: 9 });
      },
    });
    await assert.rejects(
      moveObject({
        source: busy,
        sourcePath: `${bucket}/u.bin`,
        destination: servers.azure(),
        destinationPath: `${await servers.newContainer()}/u.bin`,
      }),
      (err: unknown) => isFerryError(err, 'throttled') && err.retryAfterSeconds === 9,
    );
  });

  test('a failed copy leaves the source in place', async () => {
    const s3 = servers.s3();
    const bucket = await servers.newBucket();
    await put(s3, `${bucket}/v.bin`, DATA);
    await assert.rejects(
      moveObject({
        source: s3,
        sourcePath: `${bucket}/v.bin`,
        destination: servers.azure(),
        destinationPath: 'no-such-container/v.bin',
      }),
      (err: unknown) => isFerryError(err, 'not_found'),
    );
    assert.equal((await s3.stat(`${bucket}/v.bin`)).size, DATA.length);
  });

  test('moving an object onto itself is invalid and deletes nothing', async () => {
    const s3 = servers.s3();
    const bucket = await servers.newBucket();
    await put(s3, `${bucket}/w.bin`, DATA);
    await assert.rejects(
      moveObject({
        source: s3,
        sourcePath: `${bucket}/w.bin`,
        destination: servers.s3(),
        destinationPath: `${bucket}/w.bin`,
      }),
      (err: unknown) => isFerryError(err, 'invalid'),
    );
    assert.equal((await s3.stat(`${bucket}/w.bin`)).size, DATA.length);
  });
});
