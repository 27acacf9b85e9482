// The transfer memory budget (FERRY_TRANSFER_MEMORY, src/stores/shared/memory.ts): the budget on its
// own, then azureblob uploads against azurite that together would hold far more than the budget.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { createEgress } from '../../src/net/egress.js';
import { Secret } from '../../src/secret.js';
import { createServices } from '../../src/services.js';
import { open as openAzure } from '../../src/stores/azureblob/index.js';
import { DEFAULT_OAUTH_APPS } from '../../src/stores/context.js';
import type { Store } from '../../src/stores/contract.js';
import { createS3Store } from '../../src/stores/s3/index.js';
import { MemoryBudget } from '../../src/stores/shared/memory.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type AzuriteHandle, startAzurite } from '../support/azurite.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';

const MiB = 1024 * 1024;

/** Resolves with the order in which the acquisitions were granted. */
function recorder() {
  const order: string[] = [];
  const take = (budget: MemoryBudget, name: string, bytes: number, signal?: AbortSignal) =>
    budget.acquire(bytes, signal).then((release) => {
      order.push(name);
      return release;
    });
  return { order, take };
}

test('the budget grants in arrival order: a part that does not fit holds back the smaller ones behind it', async () => {
  const budget = new MemoryBudget(10);
  const { order, take } = recorder();
  const a = await take(budget, 'a', 6);
  const b = take(budget, 'b', 6); // does not fit beside a
  const c = take(budget, 'c', 1); // would fit, but waits its turn
  await Promise.resolve();
  assert.deepEqual(order, ['a']);
  assert.equal(budget.waiting, 2);
  a();
  const [releaseB, releaseC] = await Promise.all([b, c]);
  assert.deepEqual(order, ['a', 'b', 'c']);
  assert.equal(budget.used, 7);
  releaseB();
  releaseB(); // twice is once
  releaseC();
  assert.equal(budget.used, 0);
  assert.equal(budget.peak, 7);
});

test('a part larger than the budget waits until nothing else is held, then goes alone', async () => {
  const budget = new MemoryBudget(10);
  const { order, take } = recorder();
  const small = await take(budget, 'small', 3);
  const huge = take(budget, 'huge', 50);
  await Promise.resolve();
  assert.deepEqual(order, ['small']);
  small();
  const release = await huge;
  assert.equal(budget.used, 10, 'capped at the capacity');
  release();
  assert.equal(budget.used, 0);
});

test('an abandoned wait leaves the line and lets the next one in', async () => {
  const budget = new MemoryBudget(10);
  const { order, take } = recorder();
  const first = await take(budget, 'first', 8);
  const controller = new AbortController();
  const aborted = take(budget, 'aborted', 5, controller.signal);
  const next = take(budget, 'next', 2);
  controller.abort(new Error('canceled'));
  await assert.rejects(aborted, /canceled/);
  (await next)();
  assert.deepEqual(order, ['first', 'next']);
  first();
  assert.equal(budget.used, 0);
  assert.equal(budget.waiting, 0);
});

test('tryAcquire takes room only below its mark and never ahead of a part waiting in line', async () => {
  const budget = new MemoryBudget(10);
  const a = budget.tryAcquire(3, 4);
  assert.ok(a, '3 of 10 held, below the mark of 4');
  assert.equal(budget.tryAcquire(2, 4), undefined, '5 would pass the mark of 4');
  const b = budget.tryAcquire(1, 4);
  assert.ok(b, '4 is at the mark');
  const big = budget.acquire(7); // does not fit: waits
  await Promise.resolve();
  assert.equal(budget.waiting, 1);
  assert.equal(budget.tryAcquire(1, 10), undefined, 'a part waits in line, so nothing goes ahead of it');
  a();
  b();
  (await big)();
  assert.equal(budget.used, 0);
});

test('FERRY_TRANSFER_MEMORY sets the budget the stores get, in bytes or binary units; a bad value says what is allowed', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ferry-memory-'));
  try {
    for (const [raw, bytes] of [
      [undefined, 256 * MiB],
      ['48MiB', 48 * MiB],
      ['1GiB', 1024 * MiB],
      ['20971520', 20 * MiB],
    ] as const) {
      const config = loadConfig({ FERRY_DATA_DIR: dataDir, ...(raw ? { FERRY_TRANSFER_MEMORY: raw } : {}) });
      const services = await createServices(config, { logger: createLogger('silent') });
      try {
        assert.equal(services.stores.memory?.capacity, bytes, String(raw));
      } finally {
        await services.close();
      }
    }
    for (const raw of ['lots', '12 parsecs', '1MiB', '-5', '100GiB']) {
      assert.throws(
        () => loadConfig({ FERRY_DATA_DIR: dataDir, FERRY_TRANSFER_MEMORY: raw }),
        (err: Error) =>
          err instanceof ConfigError &&
          /FERRY_TRANSFER_MEMORY must be a size from 16 MiB to 64 GiB/.test(err.message),
        raw,
      );
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

let azurite: AzuriteHandle;
let s3rver: S3rverHandle;
before(async () => {
  [azurite, s3rver] = await Promise.all([startAzurite(), startS3rver()]);
});
after(() => Promise.all([azurite?.close(), s3rver?.close()]));

/**
 * Six uploads of `objectSize` at once into `store` (under `prefix`), each a stream of 64 KiB chunks as
 * a socket gives them. Resolves with the most bytes held in memory at once: what the sources gave minus
 * what the destination has taken (parts whose upload finished), measured at every chunk a source gives,
 * independently of the budget's own books.
 */
async function sixAtOnce(
  store: Store,
  prefix: string,
  objectSize: number,
): Promise<{ mostHeld: number; bodies: Buffer[] }> {
  const bodies = Array.from({ length: 6 }, () => randomBytes(objectSize));
  let given = 0;
  const sent = bodies.map(() => 0);
  let mostHeld = 0;
  function* source(body: Buffer): Generator<Buffer> {
    for (let at = 0; at < body.length; at += 64 * 1024) {
      given += Math.min(64 * 1024, body.length - at);
      mostHeld = Math.max(mostHeld, given - sent.reduce((a, b) => a + b, 0));
      yield body.subarray(at, at + 64 * 1024);
    }
  }
  await Promise.all(
    bodies.map((body, i) =>
      store.write(
        `${prefix}/object-${i}`,
        Readable.from(source(body), { objectMode: false, highWaterMark: 64 * 1024 }),
        {
          size: body.length,
          onProgress: (bytes) => {
            sent[i] = bytes;
          },
        },
      ),
    ),
  );
  return { mostHeld, bodies };
}

/** A fresh azurite container and an azureblob store on it, in 1 MiB parts, with `memory` as its budget. */
async function azureStore(memory: MemoryBudget, concurrency: number) {
  const container = `ferry-${randomBytes(6).toString('hex')}`;
  const admin = new BlobServiceClient(
    azurite.endpoint,
    new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
  );
  await admin.createContainer(container);
  const store = openAzure(
    {
      id: 'loc-azureblob',
      provider: 'azureblob',
      metadata: { endpoint: azurite.endpoint },
      secret: new Secret({ access_key_id: AZURITE_ACCOUNT, secret_access_key: AZURITE_KEY }),
    },
    { egress: createEgress(['127.0.0.1']), oauthApps: DEFAULT_OAUTH_APPS, memory },
    { partSize: 1 * MiB, concurrency },
  );
  return { admin, container, store };
}

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');

test('azureblob: six uploads of 8 MiB at once, 3 parts in flight each, hold at most the 2 MiB budget and all arrive intact', async () => {
  const memory = new MemoryBudget(2 * MiB);
  const { admin, container, store } = await azureStore(memory, 3);
  const { mostHeld, bodies } = await sixAtOnce(store, container, 8 * MiB);
  assert.equal(memory.peak, 2 * MiB, 'the budget was used to the full and never beyond');
  assert.equal(memory.used, 0, 'every part gave its bytes back');
  // Without the budget: 6 uploads x 3 parts of 1 MiB. With it: 2 MiB of parts, plus per source one
  // chunk read ahead and its stream's buffer.
  assert.ok(mostHeld <= 2 * MiB + 6 * 4 * 64 * 1024, `held ${(mostHeld / MiB).toFixed(2)} MiB at most`);
  for (const [i, body] of bodies.entries()) {
    const got = await admin.getContainerClient(container).getBlobClient(`object-${i}`).downloadToBuffer();
    assert.equal(md5(got), md5(body));
  }
});

test('s3: six multipart uploads of 20 MiB at once, 4 parts in flight each, hold at most the 16 MiB budget and all arrive intact', async () => {
  const memory = new MemoryBudget(16 * MiB);
  const bucket = `ferry-${randomBytes(6).toString('hex')}`;
  const admin = new S3Client({
    endpoint: s3rver.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'FERRYTESTKEY', secretAccessKey: 'ferry-test-secret-value' },
  });
  await admin.send(new CreateBucketCommand({ Bucket: bucket }));
  const store = createS3Store(
    {
      id: 'loc-s3',
      provider: 's3',
      metadata: { endpoint: s3rver.endpoint },
      secret: new Secret({ access_key_id: 'FERRYTESTKEY', secret_access_key: 'ferry-test-secret-value' }),
    },
    { egress: createEgress(['127.0.0.0/8']), oauthApps: DEFAULT_OAUTH_APPS, memory },
    { partSize: 5 * MiB, singleRequestMax: 5 * MiB, queueSize: 4 },
  );
  const { mostHeld, bodies } = await sixAtOnce(store, bucket, 20 * MiB);
  assert.ok(
    memory.peak <= 16 * MiB && memory.peak >= 15 * MiB,
    `peak ${memory.peak}: the budget was used and never passed`,
  );
  assert.equal(memory.used, 0, 'every part gave its bytes back');
  // Without the budget: 6 uploads x 4 parts of 5 MiB (120 MiB).
  assert.ok(mostHeld <= 16 * MiB + 6 * 4 * 64 * 1024, `held ${(mostHeld / MiB).toFixed(2)} MiB at most`);
  for (const [i, body] of bodies.entries()) {
    const got = await admin.send(new GetObjectCommand({ Bucket: bucket, Key: `object-${i}` }));
    assert.equal(
      md5(
        Buffer.from(
          await (got.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
        ),
      ),
      md5(body),
    );
  }
  admin.destroy();
});

/** Uploads of `size` (8 MiB) into azurite in 1 MiB parts, 4 in flight each, against a 32 MiB budget. */
async function azureUploads(count: number, size = 8 * MiB): Promise<MemoryBudget> {
  const memory = new MemoryBudget(32 * MiB);
  const { admin, container, store } = await azureStore(memory, 4);
  const bodies = Array.from({ length: count }, () => randomBytes(size));
  await Promise.all(
    bodies.map((body, i) =>
      store.write(`${container}/object-${i}`, Readable.from([body]), { size: body.length }),
    ),
  );
  for (const [i, body] of bodies.entries()) {
    const got = await admin.getContainerClient(container).getBlobClient(`object-${i}`).downloadToBuffer();
    assert.equal(md5(got), md5(body));
  }
  return memory;
}

test('a lone upload sends its parts several at once', async () => {
  const memory = await azureUploads(1);
  assert.equal(memory.peak, 4 * MiB, '4 parts of 1 MiB in flight, all it may send at once');
});

test('many uploads at once hold about one part each, not as many as each could send', async () => {
  // Eight uploads could hold 4 parts each (32 MiB, the whole budget). A part beyond an upload's first
  // is taken only while at most 3/16 of the budget (6 MiB) is held: at most one part each plus those
  // 6 MiB, whatever order they start in.
  const memory = await azureUploads(8);
  assert.ok(memory.peak <= 14 * MiB, `peak ${(memory.peak / MiB).toFixed(0)} MiB`);
  assert.equal(memory.used, 0);
});

test('uploads with less than a window of parts left take a part beyond their first only while the process holds very little', async () => {
  // 3 MiB objects: after the first part, 2 parts are left, fewer than the 4 an upload may send at
  // once. Such a part is taken only while a sixteenth of the budget (2 MiB) is held, so two uploads
  // go one part at a time each; as long uploads they would have held all 6 MiB.
  const memory = await azureUploads(2, 3 * MiB);
  assert.equal(memory.peak, 2 * MiB);
});
