// azureblob against azurite (started per file), with the fault proxy in front of it for throttle
// answers and cut connections. Rejected credentials: the emulator account with a wrong key.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { isFerryError } from '../../src/errors.js';
import { createEgress } from '../../src/net/egress.js';
import { Secret } from '../../src/secret.js';
import { type AzureTuning, open } from '../../src/stores/azureblob/index.js';
import { blockSizeFor, MAX_BLOCKS } from '../../src/stores/azureblob/upload.js';
import { DEFAULT_OAUTH_APPS, type StoreContext, type StoreLocation } from '../../src/stores/context.js';
import type { Store } from '../../src/stores/contract.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type AzuriteHandle, startAzurite } from '../support/azurite.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { ForbiddenServer } from '../support/forbidden-server.js';
import { describeConformance } from './conformance.js';

const MiB = 1024 * 1024;
const PAGE_SIZE = 5;
const TUNING: Partial<AzureTuning> = { pageSize: PAGE_SIZE, partSize: 1 * MiB, concurrency: 3 };
const THROTTLE_SECONDS = 7;

const ctx: StoreContext = { egress: createEgress(['127.0.0.1']), oauthApps: DEFAULT_OAUTH_APPS };

function location(endpoint: string | undefined, key = AZURITE_KEY, account = AZURITE_ACCOUNT): StoreLocation {
  return {
    id: 'loc-azureblob',
    provider: 'azureblob',
    metadata: endpoint === undefined ? {} : { endpoint },
    secret: new Secret({ access_key_id: account, secret_access_key: key }),
  };
}

test('blocks: an object of a few blocks is cut in four, a large one in the configured size, a huge one in as few as 50,000 hold', () => {
  const tuning = { partSize: 4 * MiB, concurrency: 8 };
  assert.equal(blockSizeFor(undefined, tuning), 4 * MiB, 'unknown size: the configured block');
  assert.equal(blockSizeFor(8 * MiB, tuning), 2 * MiB, 'a quarter of 8 MiB');
  assert.equal(blockSizeFor(5 * MiB, tuning), 2 * MiB, 'a quarter, rounded up to whole MiB');
  assert.equal(blockSizeFor(3 * MiB, tuning), 1 * MiB, 'never under 1 MiB');
  assert.equal(blockSizeFor(100 * MiB, tuning), 4 * MiB, 'never over the configured block');
  assert.equal(blockSizeFor(MAX_BLOCKS * 6 * MiB, tuning), 6 * MiB, 'grown so 50,000 blocks hold it');
});

let azurite: AzuriteHandle;
let proxy: FaultProxy;
let admin: BlobServiceClient;

before(async () => {
  azurite = await startAzurite();
  proxy = await startFaultProxy(azurite.origin);
  admin = new BlobServiceClient(
    azurite.endpoint,
    new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
  );
});

after(async () => {
  await proxy?.close();
  await azurite?.close();
});

async function newContainer(): Promise<string> {
  const name = `ferry-${randomBytes(6).toString('hex')}`;
  await admin.createContainer(name);
  return name;
}

describeConformance('azureblob', async () => {
  const base = await newContainer();
  const wrongKey = randomBytes(64).toString('base64');
  const through = `${proxy.url}/${AZURITE_ACCOUNT}`;
  const opened: Store[] = [];
  const store = open(location(through), ctx, TUNING);
  return {
    store,
    base,
    pageSize: PAGE_SIZE,
    async rejectedStore() {
      const bad = open(location(through, wrongKey), ctx, TUNING);
      opened.push(bad);
      return bad;
    },
    throttleNext(count) {
      // Azure's throttle answer: 503 ServerBusy with Retry-After (blob-service-error-codes).
      proxy.failNext(count, {
        status: 503,
        headers: {
          'content-type': 'application/xml',
          'x-ms-error-code': 'ServerBusy',
          'retry-after': String(THROTTLE_SECONDS),
        },
        body:
          '<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code>' +
          '<Message>The server is busy.\nRequestId:0\nTime:2024-01-01T00:00:00Z</Message></Error>',
      });
    },
    throttleRetryAfterSeconds: THROTTLE_SECONDS,
    async makeFolder(path) {
      const [container, ...rest] = path.split('/');
      await admin
        .getContainerClient(container as string)
        .getBlockBlobClient(`${rest.join('/')}/`)
        .upload('', 0);
    },
    secretValues: [AZURITE_KEY, wrongKey],
    skip: {
      'names-reserved':
        'Azure Storage stores "\\" in a blob name as "/" (so does azurite); the store refuses such names',
    },
    async close() {
      proxy.reset();
      for (const s of opened) await s.close();
      await store.close();
    },
  };
});

describe('azureblob specifics', () => {
  let store: Store;
  let container: string;

  before(async () => {
    store = open(location(`${proxy.url}/${AZURITE_ACCOUNT}`), ctx, TUNING);
    container = await newContainer();
  });

  test('the account names the service URL, so stores on one account can copy server-side', () => {
    assert.equal(store.account, `azureblob:${AZURITE_ACCOUNT}@${proxy.url}/${AZURITE_ACCOUNT}`);
    const pub = open(location(undefined, AZURITE_KEY, 'myaccount'), ctx);
    assert.equal(pub.account, 'azureblob:myaccount@https://myaccount.blob.core.windows.net');
  });

  test('a resumed upload keeps the blocks the service staged even when only some were recorded', async () => {
    const resumable = store.features.resumable;
    assert.ok(resumable);
    const path = `${container}/resumed-${randomBytes(4).toString('hex')}`;
    const upload = await resumable.begin(path, { size: 3 * MiB });
    const blocks = admin.getContainerClient(container).getBlockBlobClient(path.slice(container.length + 1));
    // Three blocks staged as the upload stages them; the worker died before recording the last two.
    const tags = [0, 1, 2].map((i) =>
      Buffer.from(`ferry-${upload.uploadId}-${String(i).padStart(6, '0')}`).toString('base64'),
    );
    for (const tag of tags) await blocks.stageBlock(tag, randomBytes(upload.partSize), upload.partSize);
    // A block of another upload to the same blob is not this upload's.
    const other = Buffer.from(`ferry-0123456789ab-000003`).toString('base64');
    await blocks.stageBlock(other, randomBytes(10), 10);
    const recorded = [{ index: 0, tag: tags[0] as string, size: upload.partSize }];
    const held = await resumable.check(path, upload, recorded);
    assert.deepEqual(
      held?.map((p) => [p.index, p.tag, p.size]),
      tags.map((tag, i) => [i, tag, upload.partSize]),
    );
    await resumable.abort(path, upload);
  });

  test('an account name that cannot be a host name is refused without a request', () => {
    assert.throws(
      () => open(location(undefined, AZURITE_KEY, 'evil.example.com#'), ctx),
      (err) => isFerryError(err, 'invalid'),
    );
  });

  test('an endpoint that is not an http(s) URL is refused', () => {
    for (const endpoint of ['ftp://127.0.0.1/x', 'not a url', 'http://user:pw@127.0.0.1/acct']) {
      assert.throws(
        () => open(location(endpoint), ctx),
        (err) => isFerryError(err, 'invalid'),
        endpoint,
      );
    }
  });

  test('a loopback endpoint is refused by the egress guard unless allowed', async () => {
    const guarded: StoreContext = { egress: createEgress([]), oauthApps: DEFAULT_OAUTH_APPS };
    const s = open(location(azurite.endpoint), guarded);
    await assert.rejects(s.stat(`${container}/x.txt`), (err) => {
      assert.ok(isFerryError(err, 'invalid'), String(err));
      assert.match((err as Error).message, /egress/);
      return true;
    });
    const collect = async () => {
      for await (const _ of s.list('')) {
        // nothing
      }
    };
    await assert.rejects(collect(), (err) => isFerryError(err, 'invalid'));
  });

  test('a blob name with a backslash is refused, since Azure would store it under another name', async () => {
    const path = `${container}/back\\slash.txt`;
    await assert.rejects(store.write(path, Readable.from([Buffer.from('x')]), { size: 1 }), (err) =>
      isFerryError(err, 'invalid'),
    );
    await assert.rejects(store.stat(path), (err) => isFerryError(err, 'invalid'));
  });

  test('a Put Blob takes the MD5 its body checks by its end (bodyHashes) as what it sent, not hashed again: the service’s own answer then differs', async () => {
    const data = randomBytes(64 * 1024);
    const md5 = createHash('md5').update(data).digest('hex');
    const info = await store.write(`${container}/known/one.bin`, Readable.from([data]), {
      size: data.length,
      bodyHashes: { md5 },
    });
    assert.equal(info.hashes.md5, md5);
    const other = createHash('md5').update('other bytes').digest('hex');
    await assert.rejects(
      store.write(`${container}/known/wrong.bin`, Readable.from([data]), {
        size: data.length,
        bodyHashes: { md5: other },
      }),
      (err: unknown) => isFerryError(err, 'transient') && /not that of the bytes sent/.test(String(err)),
    );
  });

  test('a blob uploaded in blocks carries the MD5 of the whole object', async () => {
    const data = randomBytes(2 * MiB + 123);
    const path = `${container}/blocks/md5.bin`;
    const info = await store.write(path, Readable.from([data]), {
      size: data.length,
      mimeType: 'application/x-test',
    });
    const md5 = createHash('md5').update(data).digest('hex');
    assert.equal(info.hashes.md5, md5);
    const stat = await store.stat(path);
    assert.equal(stat.hashes.md5, md5);
    assert.equal(stat.mimeType, 'application/x-test');
    const blocks = await admin
      .getContainerClient(container)
      .getBlockBlobClient('blocks/md5.bin')
      .getBlockList('all');
    assert.equal(blocks.committedBlocks?.length, 3, 'three 1 MiB blocks');
  });

  // The store's half of store-faults' DAMAGED_PART for Azure, which runs here rather than there: under
  // load, azurite can take longer to check a block than that file's 1 s idle bound (the engine's half,
  // a transient failure tried again until whole, is faults.test.ts' case on S3).
  test('a block damaged on the way is refused by the service, by the MD5 sent with it, and the write fails as transient', async () => {
    const data = randomBytes(2 * MiB + 123);
    const faulted = proxy.faulted;
    proxy.inject(
      { kind: 'corrupt' },
      { match: (r) => r.method === 'PUT' && new URL(r.url, 'http://x').searchParams.get('comp') === 'block' },
    );
    await assert.rejects(
      store.write(`${container}/blocks/damaged.bin`, Readable.from([data]), { size: data.length }),
      (err: unknown) => isFerryError(err, 'transient') && /md5/i.test(String(err)),
    );
    assert.equal(proxy.faulted - faulted, 1, 'a block was damaged');
    await assert.rejects(store.stat(`${container}/blocks/damaged.bin`), (err: unknown) =>
      isFerryError(err, 'not_found'),
    );
  });

  test('a connection cut in the middle of a download fails the stream as transient', async () => {
    const path = `${container}/cut/big.bin`;
    const data = randomBytes(512 * 1024);
    await store.write(path, Readable.from([data]), { size: data.length });
    proxy.dropNext(1);
    const body = await store.read(path);
    await assert.rejects(
      (async () => {
        for await (const _ of body) {
          // drain
        }
      })(),
      (err) => isFerryError(err, 'transient'),
    );
  });

  test('a copy between containers of one account is server-side and keeps the bytes', async () => {
    const other = await newContainer();
    const from = `${container}/copy/src.txt`;
    await store.write(from, Readable.from([Buffer.from('across containers')]), { size: 17 });
    const copy = store.features.copy;
    assert.ok(copy);
    const requestsBefore = proxy.requests;
    const info = await copy(from, `${other}/dst.txt`);
    assert.equal(info.size, 17);
    // Copy Blob plus the stat that answers with the result: no bytes went through the client.
    assert.ok(proxy.requests - requestsBefore <= 3, `requests: ${proxy.requests - requestsBefore}`);
    const props = await admin.getContainerClient(other).getBlobClient('dst.txt').getProperties();
    assert.equal(props.copyStatus, 'success');
  });

  test('containers are listed page by page, each once, with size -1', async () => {
    const made = [];
    for (let i = 0; i < PAGE_SIZE + 1; i++) made.push(await newContainer());
    const first = proxy.requests;
    const listed = [];
    for await (const entry of store.list('')) listed.push(entry);
    const names = listed.map((e) => e.name);
    for (const name of made) assert.ok(names.includes(name), `${name} is listed`);
    assert.equal(new Set(names).size, names.length, 'each container once');
    assert.ok(listed.every((e) => e.size === -1 && e.isDir && e.path === e.name));
    assert.ok(proxy.requests - first >= 2, 'more than one page');
  });

  test('a missing container reads as not_found for stat, read, write and list', async () => {
    const missing = `ferry-missing-${randomBytes(4).toString('hex')}`;
    const kinds = async (p: Promise<unknown>) => {
      try {
        await p;
        return 'ok';
      } catch (err) {
        return isFerryError(err) ? err.kind : String(err);
      }
    };
    assert.equal(await kinds(store.stat(`${missing}/a`)), 'not_found');
    assert.equal(await kinds(store.read(`${missing}/a`)), 'not_found');
    assert.equal(
      await kinds(store.write(`${missing}/a`, Readable.from([Buffer.from('x')]), { size: 1 })),
      'not_found',
    );
  });
});

describe('azureblob redirects (docs/api.md, "Outbound calls")', () => {
  // azurite behind the fault proxy (127.0.0.1, allowed); the forbidden server is on 127.0.0.2, which
  // the guard does not allow. The SDK's redirect policy is off: no redirect is followed, on the
  // endpoint or off it; a block upload has no session URL (blocks go to the blob's own URL).
  let forbidden: ForbiddenServer;
  let store: Store;
  let container: string;

  before(async () => {
    forbidden = await ForbiddenServer.start();
    store = open(location(`${proxy.url}/${AZURITE_ACCOUNT}`), ctx, TUNING);
    container = await newContainer();
    await store.write(`${container}/here.txt`, Readable.from([Buffer.from('here')]), { size: 4 });
  });

  after(async () => {
    proxy.reset();
    await store?.close();
    await forbidden?.close();
  });

  const blob = (name: string) => `/${AZURITE_ACCOUNT}/${container}/${name}`;

  test('a download answered with a redirect to a refused address is not followed', async () => {
    proxy.failWhen((r) => r.method === 'GET' && r.url.startsWith(blob('here.txt')), {
      status: 302,
      headers: { location: forbidden.url(blob('here.txt')) },
    });
    await assert.rejects(store.read(`${container}/here.txt`), (err) => isFerryError(err));
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
  });

  test('a redirect that stays on the endpoint is not followed either', async () => {
    proxy.failWhen((r) => r.method === 'GET' && r.url.startsWith(blob('here.txt')), {
      status: 307,
      headers: { location: `${proxy.url}${blob('here.txt')}?redirected=1` },
    });
    await assert.rejects(store.read(`${container}/here.txt`), (err) => isFerryError(err));
    assert.equal(proxy.seen.filter((r) => r.url.includes('redirected=1')).length, 0, 'not followed');
  });

  test('a block upload answered with a redirect to a refused address is not followed', async () => {
    proxy.failWhen((r) => r.method === 'PUT' && r.url.includes('comp=block'), {
      status: 307,
      headers: { location: forbidden.url(blob('blocks.bin')) },
    });
    const size = 3 * MiB;
    await assert.rejects(
      store.write(`${container}/blocks.bin`, Readable.from([randomBytes(size)]), { size }),
      (err) => isFerryError(err),
    );
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
    await assert.rejects(store.stat(`${container}/blocks.bin`), (err) => isFerryError(err, 'not_found'));
  });
});
