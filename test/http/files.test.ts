// docs/api.md "Files through ferry" over real sockets, on both databases, against s3rver: PUT stores
// the body (streamed, its Content-Type kept) and answers the listing entry; GET and HEAD stream it back
// with ranges; location by label or id; the path rules; folders and buckets; the limits; errors.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { createLocation, readS3, s3Client, seedBucket } from '../support/transfers.js';

await eachDatabase('files through ferry on s3rver', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let base: string;
  let bucket: string;
  let label: string;
  let id: string;
  const auth = () => ({ authorization: `Bearer ${t.token}` });
  const url = (location: string, path: string) =>
    `${base}/v1/files/${encodeURIComponent(location)}/${path.split('/').map(encodeURIComponent).join('/')}`;

  before(async () => {
    s3 = await startS3rver();
    t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const client = s3Client(s3.endpoint);
    bucket = await seedBucket(client, { 'docs/seeded.txt': 'seeded by the SDK' });
    client.destroy();
    ({ id, label } = await createLocation((o) => t.request(o), {
      provider: 's3',
      secret: { access_key_id: 'AKID', secret_access_key: unique('secret') },
      metadata: { endpoint: s3.endpoint },
    }));
  });
  after(async () => {
    await t?.close();
    await s3?.close();
  });

  test('PUT stores the body with its Content-Type and answers 201 with the listing entry', async () => {
    const bytes = randomBytes(300_000);
    const res = await fetch(url(label, `${bucket}/up/report one.bin`), {
      method: 'PUT',
      headers: { ...auth(), 'content-type': 'application/x-report' },
      body: bytes,
    });
    assert.equal(res.status, 201, await res.clone().text());
    const entry = (await res.json()) as Record<string, unknown>;
    assert.deepEqual(
      { ...entry, modTime: undefined },
      {
        name: 'report one.bin',
        path: `${bucket}/up/report one.bin`,
        size: bytes.length,
        isDir: false,
        mimeType: 'application/x-report',
        modTime: undefined,
      },
    );
    assert.match(String(entry.modTime), /^\d{4}-\d\d-\d\dT/);
    const client = s3Client(s3.endpoint);
    assert.deepEqual(await readS3(client, bucket, 'up/report one.bin'), bytes);
    client.destroy();
    // The entry POST /v1/list gives (an S3 listing carries no content type; GET gives it back).
    const list = await t.request({ method: 'POST', url: '/v1/list', payload: { id, path: `${bucket}/up` } });
    const { mimeType: _type, ...listed } = entry;
    assert.deepEqual(list.json().entries, [listed]);
    const get = await fetch(url(label, `${bucket}/up/report one.bin`), { headers: auth() });
    assert.equal(get.headers.get('content-type'), 'application/x-report');
    assert.deepEqual(Buffer.from(await get.arrayBuffer()), bytes);
  });

  test('PUT of a body without Content-Length (chunked) streams it to a multipart upload', async () => {
    const parts = [randomBytes(4 * 1024 * 1024), randomBytes(4 * 1024 * 1024), randomBytes(3 * 1024 * 1024)];
    const res = await fetch(url(id, `${bucket}/up/chunked.bin`), {
      method: 'PUT',
      headers: auth(),
      body: Readable.toWeb(Readable.from(parts)) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    assert.equal(res.status, 201, await res.clone().text());
    const whole = Buffer.concat(parts);
    assert.equal(((await res.json()) as { size: number }).size, whole.length);
    const got = await fetch(url(id, `${bucket}/up/chunked.bin`), { headers: auth() });
    assert.equal(got.status, 200);
    const back = Buffer.from(await got.arrayBuffer());
    assert.equal(
      createHash('sha256').update(back).digest('hex'),
      createHash('sha256').update(whole).digest('hex'),
    );
  });

  test('GET streams the file as an attachment; HEAD gives the same headers and no body', async () => {
    const get = await fetch(url(label, `${bucket}/docs/seeded.txt`), { headers: auth() });
    assert.equal(get.status, 200);
    assert.equal(await get.text(), 'seeded by the SDK');
    assert.equal(get.headers.get('content-length'), '17');
    assert.equal(get.headers.get('accept-ranges'), 'bytes');
    assert.equal(get.headers.get('content-disposition'), 'attachment; filename="seeded.txt"');
    assert.match(get.headers.get('etag') ?? '', /^"[0-9a-f]+"$/);
    const head = await fetch(url(label, `${bucket}/docs/seeded.txt`), { method: 'HEAD', headers: auth() });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), '17');
    assert.equal(head.headers.get('etag'), get.headers.get('etag'));
    assert.equal(await head.text(), '');
  });

  test('Range answers 206 with the bytes; past the end 416; If-Range with another tag the whole file', async () => {
    const path = `${bucket}/docs/seeded.txt`;
    const part = await fetch(url(label, path), { headers: { ...auth(), range: 'bytes=7-8' } });
    assert.equal(part.status, 206);
    assert.equal(await part.text(), 'by');
    assert.equal(part.headers.get('content-range'), 'bytes 7-8/17');
    const past = await fetch(url(label, path), { headers: { ...auth(), range: 'bytes=100-' } });
    assert.equal(past.status, 416);
    assert.equal(past.headers.get('content-range'), 'bytes */17');
    const stale = await fetch(url(label, path), {
      headers: { ...auth(), range: 'bytes=0-1', 'if-range': '"not-this-version"' },
    });
    assert.equal(stale.status, 200);
    assert.equal(await stale.text(), 'seeded by the SDK');
  });

  test('an unknown file is 404; a bucket or folder is 400 naming it; an empty path 400', async () => {
    const missing = await fetch(url(label, `${bucket}/docs/nope.txt`), { headers: auth() });
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as { message: string }).message, /no file "[^"]+\/docs\/nope.txt"/);
    const folder = await fetch(url(label, `${bucket}/docs`), { headers: auth() });
    assert.equal(folder.status, 400);
    assert.match(((await folder.json()) as { message: string }).message, /is a folder/);
    const root = await fetch(url(label, bucket), { headers: auth() });
    assert.equal(root.status, 400);
    assert.match(((await root.json()) as { message: string }).message, /names a bucket/);
    const onRoot = await fetch(url(label, bucket), { method: 'PUT', headers: auth(), body: 'x' });
    assert.equal(onRoot.status, 400);
    const empty = await fetch(`${base}/v1/files/${encodeURIComponent(label)}/`, {
      method: 'PUT',
      headers: auth(),
      body: 'x',
    });
    assert.equal(empty.status, 400);
    assert.match(((await empty.json()) as { message: string }).message, /names no file/);
  });
});
