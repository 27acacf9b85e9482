// docs/api.md "Files through ferry" on every store the conformance suite runs (test/stores/conformance.ts):
// s3rver, azurite, and the gcs, dropbox, drive, onedrive and box fakes, each through its production
// store behind the real app, on both databases. Per store: an upload of known size and one without
// Content-Length larger than an upload part come back byte for byte, whole, as a range and as HEAD;
// and a client that goes away mid-upload leaves no object.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { FakeBox } from '../fakes/box/server.js';
import { FakeDrive } from '../fakes/drive/server.js';
import { FakeDropbox } from '../fakes/dropbox/server.js';
import { FakeGcs } from '../fakes/gcs/index.js';
import { FakeOneDrive } from '../fakes/onedrive/server.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type AzuriteHandle, startAzurite } from '../support/azurite.js';
import { eachDatabase, gcsServiceAccount, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { createLocation } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

const MiB = 1024 * 1024;
const GCS_EMAIL = 'files@ferry-test.iam.gserviceaccount.com';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

await eachDatabase('files through ferry on every store', (database) => {
  let t: TestApp;
  let base: string;
  let s3: S3rverHandle;
  let azurite: AzuriteHandle;
  let gcs: FakeGcs;
  let gcsKey: string;
  let dropbox: FakeDropbox;
  let drive: FakeDrive;
  let onedrive: FakeOneDrive;
  let box: FakeBox;

  before(async () => {
    [s3, azurite, gcs, dropbox, drive, onedrive, box] = await Promise.all([
      startS3rver(),
      startAzurite(),
      FakeGcs.start(),
      new FakeDropbox().start(),
      FakeDrive.start(),
      FakeOneDrive.start(),
      new FakeBox({ minSessionSize: 4 * MiB, partSize: 4 * MiB }).start(),
    ]);
    gcsKey = gcs.oauth.newAccount(GCS_EMAIL);
    t = await startTestApp(database, {
      env: {
        FERRY_EGRESS_ALLOW: '127.0.0.1/32',
        FERRY_DROPBOX_API_URL: dropbox.apiUrl,
        FERRY_DROPBOX_CONTENT_URL: dropbox.contentUrl,
        FERRY_DROPBOX_TOKEN_URL: dropbox.tokenUrl,
        FERRY_DRIVE_API_URL: drive.app.apiUrl,
        FERRY_DRIVE_TOKEN_URL: drive.app.tokenUrl,
        FERRY_ONEDRIVE_API_URL: onedrive.app.apiUrl,
        FERRY_ONEDRIVE_TOKEN_URL: onedrive.app.tokenUrl,
        FERRY_BOX_API_URL: box.app.apiUrl,
        FERRY_BOX_CONTENT_URL: box.app.contentUrl,
        FERRY_BOX_TOKEN_URL: box.app.tokenUrl,
      },
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await t?.close();
    await Promise.all([
      s3?.close(),
      azurite?.close(),
      gcs?.close(),
      dropbox?.close(),
      drive?.close(),
      onedrive?.close(),
      box?.close(),
    ]);
  });

  const call = (o: Parameters<TestApp['request']>[0]) => t.request(o);
  /** The upload bytes the server has taken in so far (its metric). */
  const bytesIn = async () => {
    const text = (await t.request({ method: 'GET', url: '/metrics' })).body;
    return Number(/ferry_file_bytes_total\{direction="in"\} (\d+)/.exec(text)?.[1] ?? 0);
  };
  const auth = () => ({ authorization: `Bearer ${t.token}` });
  const fileUrl = (location: string, path: string) =>
    `${base}/v1/files/${encodeURIComponent(location)}/${path.split('/').map(encodeURIComponent).join('/')}`;

  /** A location on the store, and the folder (bucket stores: a new bucket) the test works in. */
  const stores: Record<string, () => Promise<{ id: string; folder: string }>> = {
    s3: () =>
      withBucket({
        provider: 's3',
        secret: { access_key_id: 'AKID', secret_access_key: unique('s') },
        metadata: { endpoint: s3.endpoint },
      }),
    azureblob: () =>
      withBucket({
        provider: 'azureblob',
        secret: { access_key_id: AZURITE_ACCOUNT, secret_access_key: AZURITE_KEY },
        metadata: { endpoint: azurite.endpoint },
      }),
    gcs: () =>
      withBucket({
        provider: 'gcs',
        secret: gcsServiceAccount(gcsKey, GCS_EMAIL, gcs.tokenUrl),
        metadata: { endpoint: gcs.url },
      }),
    dropbox: () => oauthLocation('dropbox', dropbox.oauth.issue(unique('acct'))),
    drive: () => oauthLocation('drive', drive.oauth.issue(unique('acct'))),
    onedrive: () => oauthLocation('onedrive', onedrive.oauth.issue(unique('acct'))),
    box: () => oauthLocation('box', box.oauth.issue(unique('acct'))),
  };

  async function withBucket(body: Parameters<typeof createLocation>[1]) {
    const { id } = await createLocation(call, body);
    const bucket = unique('files').toLowerCase();
    const made = await call({ method: 'POST', url: '/v1/buckets', payload: { id, bucket } });
    assert.equal(made.statusCode, 201, made.body);
    return { id, folder: bucket };
  }

  async function oauthLocation(provider: string, tokens: object) {
    const { id } = await createLocation(call, { provider, secret: { ...tokens } });
    return { id, folder: unique('files') };
  }

  for (const [provider, make] of Object.entries(stores)) {
    test(`${provider}: known size and chunked uploads come back whole, as a range and as HEAD`, async () => {
      const { id, folder } = await make();
      const small = randomBytes(70_000);
      const put = await fetch(fileUrl(id, `${folder}/small.bin`), {
        method: 'PUT',
        headers: { ...auth(), 'content-type': 'application/octet-stream' },
        body: small,
      });
      assert.equal(put.status, 201, await put.clone().text());
      assert.equal(((await put.json()) as { size: number }).size, small.length);

      // Larger than one upload part of every store here, and of unknown size.
      const pieces = Array.from({ length: 9 }, () => randomBytes(MiB));
      const large = Buffer.concat(pieces);
      const chunked = await fetch(fileUrl(id, `${folder}/sub/large é.bin`), {
        method: 'PUT',
        headers: auth(),
        body: Readable.toWeb(Readable.from(pieces)) as ReadableStream,
        duplex: 'half',
      } as RequestInit);
      assert.equal(chunked.status, 201, await chunked.clone().text());
      assert.equal(((await chunked.json()) as { size: number }).size, large.length);

      const whole = await fetch(fileUrl(id, `${folder}/sub/large é.bin`), { headers: auth() });
      assert.equal(whole.status, 200);
      assert.equal(whole.headers.get('content-length'), String(large.length));
      assert.equal(sha256(Buffer.from(await whole.arrayBuffer())), sha256(large));
      const range = await fetch(fileUrl(id, `${folder}/sub/large é.bin`), {
        headers: { ...auth(), range: `bytes=${5 * MiB - 10}-${5 * MiB + 9}` },
      });
      assert.equal(range.status, 206);
      assert.deepEqual(Buffer.from(await range.arrayBuffer()), large.subarray(5 * MiB - 10, 5 * MiB + 10));
      const head = await fetch(fileUrl(id, `${folder}/small.bin`), { method: 'HEAD', headers: auth() });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-length'), String(small.length));
      const back = await fetch(fileUrl(id, `${folder}/small.bin`), { headers: auth() });
      assert.deepEqual(Buffer.from(await back.arrayBuffer()), small);
    });

    test(`${provider}: a client that goes away mid-upload leaves no object`, async () => {
      const { id, folder } = await make();
      for (const size of [6 * MiB, undefined]) {
        const path = `${folder}/cut-${size ?? 'chunked'}.bin`;
        const answered = t.logs.lines.length;
        const before = await bytesIn();
        const req = httpRequest(fileUrl(id, path), {
          method: 'PUT',
          headers: { ...auth(), ...(size === undefined ? {} : { 'content-length': String(size) }) },
        });
        const closed = new Promise<void>((resolve) => {
          req.on('error', () => resolve());
          req.on('close', () => resolve());
        });
        req.write(randomBytes(3 * MiB));
        // The client goes away once the server has taken in some of the body: the upload is under way.
        await waitUntil(async () => (await bytesIn()) > before, {
          what: 'the upload to start on the server',
        });
        req.destroy();
        await closed;
        // The server says when it has given up on the upload (and aborted the store's write).
        await waitUntil(
          () =>
            t.logs.lines.slice(answered).some((line) => line.includes('upload stopped before it was stored')),
          { what: 'the cut upload to end on the server' },
        );
        const get = await fetch(fileUrl(id, path), { headers: auth() });
        assert.equal(get.status, 404, `${path}: ${await get.text()}`);
      }
    });
  }
});
