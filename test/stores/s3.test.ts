// The S3 family against s3rver (started per file), with the fault proxy in front of it for throttle
// answers and cut connections. s3, r2, wasabi and b2 each run the conformance suite through the
// metadata `endpoint` override; unit tests pin how each derives its endpoint without one, and what
// s3rver cannot do (UploadPartCopy for copies over 5 GiB) is pinned by the requests we build.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import {
  CopyObjectCommand,
  CreateBucketCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { isFerryError } from '../../src/errors.js';
import { createEgress } from '../../src/net/egress.js';
import { parseRetryAfter } from '../../src/net/failures.js';
import type { S3FamilyProvider } from '../../src/providers.js';
import { Secret } from '../../src/secret.js';
import { DEFAULT_OAUTH_APPS, type StoreContext, type StoreLocation } from '../../src/stores/context.js';
import type { Entry, Store } from '../../src/stores/contract.js';
import { s3BucketCreation } from '../../src/stores/s3/buckets.js';
import { copyObject, planCopyParts } from '../../src/stores/s3/copy.js';
import { resolveConnection } from '../../src/stores/s3/endpoint.js';
import { s3Error } from '../../src/stores/s3/errors.js';
import { createS3Store, open, type S3Tuning } from '../../src/stores/s3/index.js';
import { copySource } from '../../src/stores/s3/paths.js';
import { partSizeFor, S3_UPLOAD_LIMITS } from '../../src/stores/s3/upload.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { FAKES_ONLY, ForbiddenServer } from '../support/forbidden-server.js';
import { REJECTED_ACCESS_KEY_ID, type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { describeConformance } from './conformance.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const PAGE_SIZE = 7;
// s3rver accepts S3's 5 MiB minimum part; a 5 MiB single-request cut-off keeps "larger than one
// part" objects near 8 MiB.
const TUNING: S3Tuning = { pageSize: PAGE_SIZE, partSize: 5 * MiB, singleRequestMax: 5 * MiB, queueSize: 3 };
const THROTTLE_SECONDS = 7;
const GOOD_KEY = { access_key_id: 'FERRYTESTKEY', secret_access_key: 'ferry-test-secret-value' };
const BAD_KEY = { access_key_id: REJECTED_ACCESS_KEY_ID, secret_access_key: 'ferry-rejected-secret-value' };

const ctx: StoreContext = { egress: createEgress(['127.0.0.0/8']), oauthApps: DEFAULT_OAUTH_APPS };

function location(
  provider: S3FamilyProvider,
  metadata: Record<string, unknown>,
  key: { access_key_id: string; secret_access_key: string } = GOOD_KEY,
): StoreLocation {
  return { id: `loc-${provider}`, provider, metadata, secret: new Secret(key) };
}

let s3rver: S3rverHandle;
let proxy: FaultProxy;
let admin: S3Client;

before(async () => {
  s3rver = await startS3rver();
  proxy = await startFaultProxy(s3rver.endpoint);
  admin = new S3Client({
    endpoint: s3rver.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
});

after(async () => {
  admin?.destroy();
  await proxy?.close();
  await s3rver?.close();
});

async function newBucket(): Promise<string> {
  const name = `ferry-${randomBytes(6).toString('hex')}`;
  await admin.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

/** S3's throttle answer (ErrorResponses.html: 503 SlowDown), with the Retry-After R2 and others send. */
function throttle(count: number): void {
  proxy.failNext(count, {
    status: 503,
    headers: { 'content-type': 'application/xml', 'retry-after': String(THROTTLE_SECONDS) },
    body:
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>' +
      '<Message>Please reduce your request rate.</Message><RequestId>ferry-test</RequestId></Error>',
  });
}

function metadataFor(provider: S3FamilyProvider): Record<string, unknown> {
  const endpoint = proxy.url;
  switch (provider) {
    case 's3':
      return { endpoint, region: 'us-east-1' };
    case 'r2':
      return { endpoint, account_id: '0123456789abcdef0123456789abcdef' };
    case 'wasabi':
      return { endpoint, region: 'eu-central-1' };
    case 'b2':
      return { endpoint, region: 'us-west-004' };
  }
}

for (const provider of ['s3', 'r2', 'wasabi', 'b2'] as const) {
  describeConformance(provider, async () => {
    const base = await newBucket();
    const opened: Store[] = [];
    const store = createS3Store(location(provider, metadataFor(provider)), ctx, TUNING);
    return {
      store,
      base,
      pageSize: PAGE_SIZE,
      throttleRetryAfterSeconds: THROTTLE_SECONDS,
      secretValues: [GOOD_KEY.secret_access_key, BAD_KEY.secret_access_key],
      async rejectedStore() {
        const bad = createS3Store(location(provider, metadataFor(provider), BAD_KEY), ctx, TUNING);
        opened.push(bad);
        return bad;
      },
      throttleNext: throttle,
      async makeFolder(path) {
        // What the S3 console does for "Create folder": a zero-byte object named "folder/".
        const [bucket, ...rest] = path.split('/');
        await admin.send(new PutObjectCommand({ Bucket: bucket, Key: `${rest.join('/')}/`, Body: '' }));
      },
      async close() {
        proxy.reset();
        for (const s of opened) await s.close();
        await store.close();
      },
    };
  });
}

describe('s3 store specifics', () => {
  test('a connection cut mid-read surfaces as a transient error, not a short object', async () => {
    const bucket = await newBucket();
    const store = createS3Store(location('s3', { endpoint: proxy.url }), ctx, TUNING);
    try {
      const data = randomBytes(256 * 1024);
      await store.write(`${bucket}/cut.bin`, Readable.from([data]), { size: data.length });
      proxy.dropNext(1);
      await assert.rejects(
        (async () => {
          for await (const _ of await store.read(`${bucket}/cut.bin`)) {
            // drain
          }
        })(),
        (err: unknown) => isFerryError(err, 'transient'),
      );
      proxy.dropNext(1);
      await assert.rejects(store.stat(`${bucket}/cut.bin`), (err: unknown) => isFerryError(err, 'transient'));
    } finally {
      proxy.reset();
      await store.close();
    }
  });

  test('a PutObject sends the MD5 its body checks by its end (bodyHashes) as Content-MD5, not hashed again: a wrong one is refused', async () => {
    const bucket = await newBucket();
    const store = createS3Store(location('s3', { endpoint: s3rver.endpoint }), ctx, TUNING);
    try {
      const data = randomBytes(64 * 1024);
      const md5 = createHash('md5').update(data).digest('hex');
      const info = await store.write(`${bucket}/known.bin`, Readable.from([data]), {
        size: data.length,
        bodyHashes: { md5 },
      });
      assert.equal(info.hashes.md5, md5);
      assert.deepEqual(info.verified, ['md5']);
      const other = createHash('md5').update('other bytes').digest('hex');
      await assert.rejects(
        store.write(`${bucket}/wrong.bin`, Readable.from([data]), {
          size: data.length,
          bodyHashes: { md5: other },
        }),
        (err: unknown) => isFerryError(err, 'transient'),
      );
    } finally {
      await store.close();
    }
  });

  test("closing a store leaves the shared egress agents, and so other stores' connections, alone", async () => {
    const agents = [ctx.egress.httpAgent, ctx.egress.httpsAgent];
    const destroyed: string[] = [];
    const originals = agents.map((agent) => agent.destroy);
    agents.forEach((agent, i) => {
      agent.destroy = () => void destroyed.push(i === 0 ? 'http' : 'https');
    });
    try {
      const store = createS3Store(location('s3', { endpoint: proxy.url }), ctx, TUNING);
      await store.stat(`${await newBucket()}/x`).catch(() => undefined);
      await store.close();
      assert.deepEqual(destroyed, []);
    } finally {
      agents.forEach((agent, i) => {
        agent.destroy = originals[i] as typeof agent.destroy;
      });
    }
  });

  test('an endpoint on loopback is refused unless FERRY_EGRESS_ALLOW names it', async () => {
    const guarded: StoreContext = { egress: createEgress([]), oauthApps: DEFAULT_OAUTH_APPS };
    const store = open(location('s3', { endpoint: s3rver.endpoint }), guarded);
    try {
      await assert.rejects(store.stat('bucket/key'), (err: unknown) => {
        assert.ok(isFerryError(err, 'invalid'), String(err));
        assert.match(err.message, /egress to 127\.0\.0\.1 \(127\.0\.0\.1\) is not allowed/);
        return true;
      });
      const named = open(
        location('s3', { endpoint: s3rver.endpoint.replace('127.0.0.1', 'localhost') }),
        guarded,
      );
      await assert.rejects(named.stat('bucket/key'), (err: unknown) => isFerryError(err, 'invalid'));
      await named.close();
    } finally {
      await store.close();
    }
  });

  test('the account names provider, endpoint and key id, never the secret', () => {
    const store = open(location('r2', { account_id: 'abc123' }), ctx);
    assert.equal(store.account, 'r2 https://abc123.r2.cloudflarestorage.com FERRYTESTKEY');
    assert.ok(!store.account.includes(GOOD_KEY.secret_access_key));
    const aws = open(location('s3', { region: 'eu-west-1' }), ctx);
    assert.equal(aws.account, 's3 aws FERRYTESTKEY');
  });

  test('a copy given the listed size and ETag is one CopyObject, confirmed by its answer', async () => {
    const bucket = await newBucket();
    const store = createS3Store(location('s3', { endpoint: proxy.url }), ctx, TUNING);
    try {
      const data = randomBytes(100_000);
      await store.write(`${bucket}/src/a.bin`, Readable.from([data]), { size: data.length });
      const listed: Entry[] = [];
      for await (const entry of store.list(`${bucket}/src`)) listed.push(entry);
      const entry = listed[0];
      assert.ok(entry?.etag, 'the listing reports the ETag');
      const source = { path: entry.path, size: entry.size, hashes: {}, etag: entry.etag };
      const before = proxy.requests;
      const copied = await store.features.copy?.(`${bucket}/src/a.bin`, `${bucket}/dst/a.bin`, { source });
      assert.equal(proxy.requests - before, 1, 'CopyObject alone: no HEAD of the source or the copy');
      assert.equal(copied?.size, data.length);
      assert.equal(copied?.hashes.md5, createHash('md5').update(data).digest('hex'));
      const back = await store.stat(`${bucket}/dst/a.bin`);
      assert.equal(back.size, data.length);
      assert.equal(back.hashes.md5, copied?.hashes.md5);
    } finally {
      await store.close();
    }
  });

  test('a copy whose answer does not repeat the given ETag is checked by a HEAD of the copy', async () => {
    // s3rver ignores x-amz-copy-source-if-match (S3 would answer 412), so the copy goes ahead and
    // its answer's ETag differs from the stale one given: the store reads what was really stored.
    const bucket = await newBucket();
    const store = createS3Store(location('s3', { endpoint: proxy.url }), ctx, TUNING);
    try {
      const data = randomBytes(5_000);
      await store.write(`${bucket}/a.bin`, Readable.from([data]), { size: data.length });
      const stale = { path: `${bucket}/a.bin`, size: 4_000, hashes: {}, etag: `"${'0'.repeat(32)}"` };
      const before = proxy.requests;
      const copied = await store.features.copy?.(`${bucket}/a.bin`, `${bucket}/b.bin`, { source: stale });
      assert.equal(proxy.requests - before, 2, 'CopyObject, then a HEAD of the copy');
      assert.equal(copied?.size, data.length, 'the size stored, not the stale one given');
    } finally {
      await store.close();
    }
  });

  test('a copy pinned to an ETag that no longer holds is a transient "source changed"', async () => {
    const bucket = await newBucket();
    const store = createS3Store(location('s3', { endpoint: proxy.url }), ctx, TUNING);
    try {
      await store.write(`${bucket}/a.bin`, Readable.from([Buffer.from('x')]), { size: 1 });
      proxy.failNext(1, {
        status: 412,
        headers: { 'content-type': 'application/xml' },
        body: '<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>',
      });
      const source = { path: `${bucket}/a.bin`, size: 1, hashes: {}, etag: '"abc"' };
      const copy = store.features.copy;
      assert.ok(copy);
      await assert.rejects(copy(`${bucket}/a.bin`, `${bucket}/b.bin`, { source }), (err: unknown) => {
        assert.ok(isFerryError(err, 'transient'), String(err));
        assert.match(err.message, /copy .*a\.bin to .*b\.bin: the source changed since it was listed/);
        return true;
      });
    } finally {
      proxy.reset();
      await store.close();
    }
  });

  test('features: bucket listing, md5, S3 upload limits, copy but no move', () => {
    const store = open(location('s3', {}), ctx);
    assert.equal(store.features.bucketListing, true);
    assert.deepEqual(store.features.hashes, ['md5']);
    assert.deepEqual(store.features.upload, {
      minPartSize: 5 * MiB,
      maxPartSize: 5 * GiB,
      maxParts: 10_000,
      singleRequestMax: 16 * MiB,
    });
    assert.equal(typeof store.features.copy, 'function');
    assert.equal(store.features.move, undefined, 'copy + delete is the operations layer');
  });
});

describe('s3 endpoint derivation', () => {
  test('s3 leaves the endpoint to the SDK for the region (default us-east-1), virtual-hosted', () => {
    assert.deepEqual(resolveConnection('s3', {}), {
      endpoint: undefined,
      region: 'us-east-1',
      forcePathStyle: false,
      checksums: 'WHEN_SUPPORTED',
      callerEndpoint: false,
    });
    assert.equal(resolveConnection('s3', { region: 'eu-west-3' }).region, 'eu-west-3');
  });

  test('r2 derives https://<account_id>.r2.cloudflarestorage.com with region auto', () => {
    const c = resolveConnection('r2', { account_id: '0123456789abcdef0123456789abcdef' });
    assert.equal(c.endpoint, 'https://0123456789abcdef0123456789abcdef.r2.cloudflarestorage.com');
    assert.equal(c.region, 'auto');
    assert.equal(c.forcePathStyle, true);
    assert.equal(c.checksums, 'WHEN_REQUIRED');
    assert.throws(() => resolveConnection('r2', {}), /account_id is required/);
    assert.throws(() => resolveConnection('r2', { account_id: 'evil.com/x' }), /not a valid account_id/);
  });

  test('wasabi derives s3.wasabisys.com for us-east-1 and s3.<region>.wasabisys.com elsewhere', () => {
    assert.equal(resolveConnection('wasabi', {}).endpoint, 'https://s3.wasabisys.com');
    assert.equal(resolveConnection('wasabi', {}).region, 'us-east-1');
    assert.equal(resolveConnection('wasabi', { region: 'us-east-1' }).endpoint, 'https://s3.wasabisys.com');
    const eu = resolveConnection('wasabi', { region: 'eu-central-1' });
    assert.equal(eu.endpoint, 'https://s3.eu-central-1.wasabisys.com');
    assert.equal(eu.region, 'eu-central-1');
    assert.equal(eu.forcePathStyle, true);
  });

  test('b2 derives https://s3.<region>.backblazeb2.com and needs a region', () => {
    const c = resolveConnection('b2', { region: 'us-west-004' });
    assert.equal(c.endpoint, 'https://s3.us-west-004.backblazeb2.com');
    assert.equal(c.region, 'us-west-004');
    assert.equal(c.checksums, 'WHEN_REQUIRED');
    assert.throws(() => resolveConnection('b2', {}), /region is required/);
  });

  test('metadata endpoint overrides every provider, path-style unless force_path_style says otherwise', () => {
    for (const provider of ['s3', 'r2', 'wasabi', 'b2'] as const) {
      const c = resolveConnection(provider, {
        endpoint: 'https://minio.example.com:9000/',
        region: 'us-east-1',
      });
      assert.equal(c.endpoint, 'https://minio.example.com:9000', provider);
      assert.equal(c.forcePathStyle, true, provider);
      assert.equal(c.callerEndpoint, true, provider);
      assert.equal(c.checksums, 'WHEN_REQUIRED', `${provider}: S3-compatible servers get WHEN_REQUIRED`);
    }
    const virtual = resolveConnection('s3', {
      endpoint: 'https://minio.example.com',
      force_path_style: false,
    });
    assert.equal(virtual.forcePathStyle, false);
    assert.equal(resolveConnection('s3', { force_path_style: true }).forcePathStyle, true);
  });

  test('a bad endpoint or metadata type is invalid', () => {
    assert.throws(() => resolveConnection('s3', { endpoint: 'ftp://x' }), /http or https/);
    assert.throws(() => resolveConnection('s3', { endpoint: 'not a url' }), /not a URL/);
    assert.throws(() => resolveConnection('s3', { endpoint: 'https://u:p@x.example' }), /credentials/);
    assert.throws(() => resolveConnection('s3', { region: 42 }), /must be a string/);
    assert.throws(() => resolveConnection('s3', { force_path_style: 'yes' }), /true or false/);
  });
});

describe('s3 requests s3rver cannot answer', () => {
  // s3rver has no UploadPartCopy (it answers NotImplemented), so the multipart copy for objects over
  // 5 GiB is pinned here by the exact requests it sends, against a recording stand-in client.
  test('a copy over 5 GiB is a multipart upload of UploadPartCopy ranges, completed in order', async () => {
    const sent: { name: string; input: Record<string, unknown> }[] = [];
    const client = {
      async send(command: { constructor: { name: string }; input: Record<string, unknown> }) {
        sent.push({ name: command.constructor.name, input: command.input });
        switch (command.constructor.name) {
          case 'CreateMultipartUploadCommand':
            return { UploadId: 'up-1' };
          case 'UploadPartCopyCommand':
            return { CopyPartResult: { ETag: `"etag-${command.input.PartNumber}"` } };
          default:
            return {};
        }
      },
    };
    const size = 5 * GiB + 1;
    await copyObject(
      client as never,
      { bucket: 'src', key: 'a b+c%.bin' },
      { bucket: 'dst', key: 'out/x.bin' },
      { ContentLength: size, ContentType: 'application/octet-stream', ETag: '"abc"' },
    );
    assert.equal(sent[0]?.name, 'CreateMultipartUploadCommand');
    assert.deepEqual(sent[0]?.input, {
      Bucket: 'dst',
      Key: 'out/x.bin',
      ContentType: 'application/octet-stream',
    });
    const parts = sent.filter((s) => s.name === 'UploadPartCopyCommand');
    assert.equal(parts.length, 11, '5 GiB + 1 byte in 512 MiB parts');
    assert.deepEqual(parts[0]?.input, {
      Bucket: 'dst',
      Key: 'out/x.bin',
      UploadId: 'up-1',
      PartNumber: 1,
      CopySource: 'src/a%20b%2Bc%25.bin',
      CopySourceRange: `bytes=0-${512 * MiB - 1}`,
      CopySourceIfMatch: '"abc"',
    });
    assert.equal(parts.at(-1)?.input.CopySourceRange, `bytes=${5 * GiB}-${5 * GiB}`);
    const complete = sent.at(-1);
    assert.ok(complete);
    assert.equal(complete.name, 'CompleteMultipartUploadCommand');
    const completed = (complete.input.MultipartUpload as { Parts: { PartNumber: number; ETag: string }[] })
      .Parts;
    assert.deepEqual(
      completed.map((p) => p.PartNumber),
      Array.from({ length: 11 }, (_, i) => i + 1),
    );
    assert.equal(completed[0]?.ETag, '"etag-1"');
  });

  test('a failed multipart copy is aborted', async () => {
    const sent: string[] = [];
    const client = {
      async send(command: { constructor: { name: string } }) {
        sent.push(command.constructor.name);
        if (command.constructor.name === 'CreateMultipartUploadCommand') return { UploadId: 'up-2' };
        if (command.constructor.name === 'UploadPartCopyCommand') throw new Error('boom');
        return {};
      },
    };
    await assert.rejects(
      copyObject(
        client as never,
        { bucket: 'a', key: 'k' },
        { bucket: 'b', key: 'k' },
        { ContentLength: 6 * GiB },
      ),
    );
    assert.equal(sent.at(-1), 'AbortMultipartUploadCommand');
  });

  test('a copy up to 5 GiB is one CopyObject, pinned to the ETag when one is known', async () => {
    const sent: unknown[] = [];
    const client = {
      async send(command: unknown) {
        sent.push(command);
        return { CopyObjectResult: { ETag: '"abc"' } };
      },
    };
    const answer = await copyObject(
      client as never,
      { bucket: 'a', key: 'k' },
      { bucket: 'b', key: 'k2' },
      { ContentLength: 5 * GiB, ETag: '"abc"' },
    );
    assert.equal(sent.length, 1);
    assert.ok(sent[0] instanceof CopyObjectCommand);
    assert.ok(!(sent[0] instanceof UploadPartCopyCommand));
    assert.deepEqual(sent[0].input, {
      Bucket: 'b',
      Key: 'k2',
      CopySource: 'a/k',
      CopySourceIfMatch: '"abc"',
    });
    assert.deepEqual(answer, { etag: '"abc"' });
    await copyObject(
      client as never,
      { bucket: 'a', key: 'k' },
      { bucket: 'b', key: 'k3' },
      { ContentLength: 1 },
    );
    assert.ok(sent[1] instanceof CopyObjectCommand);
    assert.equal(sent[1].input.CopySourceIfMatch, undefined, 'no ETag known, no condition');
  });

  test('copy parts grow to fit 10,000 parts', () => {
    const parts = planCopyParts(5 * 1024 * GiB);
    assert.ok(parts.length <= 10_000);
    assert.equal(parts.at(-1)?.CopySourceRange.endsWith(`-${5 * 1024 * GiB - 1}`), true);
  });

  test('the copy source is URL-encoded segment by segment', () => {
    assert.equal(
      copySource({ bucket: 'b', key: "dir/é #?&=+%'(x).txt" }),
      'b/dir/%C3%A9%20%23%3F%26%3D%2B%25%27%28x%29.txt',
    );
  });

  test('upload part size grows so a known size fits in 10,000 parts', () => {
    const tuning = { limits: S3_UPLOAD_LIMITS, partSize: 8 * MiB, queueSize: 4 };
    assert.equal(partSizeFor(undefined, tuning), 8 * MiB);
    assert.equal(partSizeFor(10 * GiB, tuning), 8 * MiB);
    const big = partSizeFor(1024 * GiB, tuning);
    assert.ok(big * 10_000 >= 1024 * GiB);
    assert.equal(big % MiB, 0);
    assert.throws(() => partSizeFor(49 * 1024 * GiB, tuning), /larger than the provider allows/);
  });
});

describe('s3 error mapping', () => {
  const sdkError = (name: string, status: number, headers: Record<string, string> = {}) =>
    Object.assign(new Error(`${name} message`), {
      name,
      $metadata: { httpStatusCode: status },
      $response: { statusCode: status, headers },
    });

  test('codes map to kinds', () => {
    const cases: [string, number, string][] = [
      ['NoSuchKey', 404, 'not_found'],
      ['NoSuchBucket', 404, 'not_found'],
      ['NotFound', 404, 'not_found'],
      ['InvalidAccessKeyId', 403, 'credentials_rejected'],
      ['SignatureDoesNotMatch', 403, 'credentials_rejected'],
      ['ExpiredToken', 400, 'credentials_rejected'],
      // A permission answer about one bucket or key says nothing about the credentials themselves.
      ['AccessDenied', 403, 'forbidden'],
      ['403', 403, 'forbidden'],
      ['SlowDown', 503, 'throttled'],
      ['TooManyRequests', 429, 'throttled'],
      ['ServiceUnavailable', 503, 'throttled'],
      ['InternalError', 500, 'transient'],
      ['BadGateway', 502, 'transient'],
      ['InvalidRange', 416, 'invalid'],
      ['NotImplemented', 501, 'unsupported'],
    ];
    for (const [code, status, kind] of cases) {
      assert.equal(s3Error(sdkError(code, status), 'op').kind, kind, code);
    }
    const network = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    assert.equal(s3Error(network, 'op').kind, 'transient');
  });

  test('Retry-After is read as seconds or as an HTTP date', () => {
    assert.equal(s3Error(sdkError('SlowDown', 503, { 'retry-after': '12' }), 'op').retryAfterSeconds, 12);
    assert.equal((parseRetryAfter(new Date(Date.now() + 30_000).toUTCString()) as number) >= 29, true);
    assert.equal(parseRetryAfter('soon'), undefined);
    assert.equal(s3Error(sdkError('SlowDown', 503), 'op').retryAfterSeconds, undefined);
  });

  test('the message keeps the provider words and says what was being done', () => {
    const err = s3Error(sdkError('NoSuchKey', 404), 'stat b/k');
    assert.equal(err.message, 'stat b/k: NoSuchKey: NoSuchKey message (HTTP 404)');
  });
});

describe('s3 redirects (docs/api.md, "Outbound calls")', () => {
  // s3rver behind the fault proxy (127.0.0.1, allowed); the forbidden server is on 127.0.0.2, which
  // this guard does not allow. The SDK's HTTP handler follows no redirect; multipart uploads have no
  // session URL (parts go to the endpoint with the upload id).
  const fenced: StoreContext = { egress: createEgress(FAKES_ONLY), oauthApps: DEFAULT_OAUTH_APPS };
  let forbidden: ForbiddenServer;
  let store: Store;
  let bucket: string;

  before(async () => {
    forbidden = await ForbiddenServer.start();
    store = createS3Store(location('s3', { endpoint: proxy.url }), fenced, TUNING);
    bucket = await newBucket();
    await store.write(`${bucket}/here.txt`, Readable.from([Buffer.from('here')]), { size: 4 });
  });

  after(async () => {
    proxy.reset();
    await store?.close();
    await forbidden?.close();
  });

  test('an object read answered with a redirect to a refused address is not followed', async () => {
    proxy.failWhen((r) => r.method === 'GET' && r.url.startsWith(`/${bucket}/here.txt`), {
      status: 307,
      headers: { location: forbidden.url(`/${bucket}/here.txt`) },
    });
    await assert.rejects(store.read(`${bucket}/here.txt`), (err) => isFerryError(err));
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
  });

  test('a multipart part answered with a redirect to a refused address is not followed', async () => {
    proxy.failWhen((r) => r.method === 'PUT' && r.url.includes('partNumber=2'), {
      status: 307,
      headers: { location: forbidden.url(`/${bucket}/multi.bin`) },
    });
    const size = 11 * MiB;
    await assert.rejects(
      store.write(`${bucket}/multi.bin`, Readable.from([randomBytes(size)]), { size }),
      (err) => isFerryError(err),
    );
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
    await assert.rejects(store.stat(`${bucket}/multi.bin`), (err) => isFerryError(err, 'not_found'));
  });
});

describe('s3 bucket creation (docs/api.md, "Buckets")', () => {
  const conflictAnswer = (code: string, message: string) => ({
    status: 409,
    headers: { 'content-type': 'application/xml' },
    body: `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><BucketName>taken-name</BucketName><RequestId>ferry-test</RequestId></Error>`,
  });

  // s3rver has one account, so another account's bucket is the provider's answer played by the proxy:
  // HeadBucket finds nothing (404), CreateBucket answers as S3 does for a name in use.
  test("a name taken by another account is conflict saying so; one of one's own is conflict saying that", async () => {
    const store = createS3Store(location('s3', { endpoint: proxy.url, region: 'us-east-1' }), ctx, TUNING);
    const creation = store.features.createBucket;
    assert.ok(creation);
    for (const [code, said] of [
      ['BucketAlreadyExists', /taken by a bucket of another account/],
      ['BucketAlreadyOwnedByYou', /already exists and is yours/],
    ] as const) {
      proxy.failNext(1, { status: 404 });
      proxy.failNext(1, conflictAnswer(code, 'The requested bucket name is not available.'));
      const err = await creation.create('taken-name').then(
        () => assert.fail('created'),
        (e: unknown) => e,
      );
      assert.ok(isFerryError(err, 'conflict'), String(err));
      assert.match(err.message, said);
      assert.match(err.message, new RegExp(code));
    }
  });

  test('AWS outside us-east-1 gets the region as LocationConstraint; other endpoints none', async () => {
    const seen: unknown[] = [];
    const handle = {
      provider: 's3' as const,
      account: 'test',
      connection: resolveConnection('s3', { region: 'eu-west-1' }),
      client: {
        async send(command: { input: unknown; constructor: { name: string } }) {
          if (command.constructor.name === 'HeadBucketCommand')
            throw Object.assign(new Error('NotFound'), {
              name: 'NotFound',
              $metadata: { httpStatusCode: 404 },
            });
          seen.push(command.input);
          return {};
        },
      },
    };
    await s3BucketCreation('s3', handle as never).create('eu-bucket');
    assert.deepEqual(seen, [
      { Bucket: 'eu-bucket', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' } },
    ]);
    seen.length = 0;
    const r2 = {
      ...handle,
      provider: 'r2' as const,
      connection: resolveConnection('r2', { account_id: 'abc' }),
    };
    await s3BucketCreation('r2', r2 as never).create('r2-bucket');
    assert.deepEqual(seen, [{ Bucket: 'r2-bucket' }]);
  });
});
