// Issue 27, "Faults, rotation and scale": the table of store faults (test/support/store-faults.ts) in
// front of the OAuth stores other than Dropbox (./store-faults.test.ts has it with s3rver, azurite,
// gcs and Dropbox): the OneDrive, Google Drive and Box fakes, each as the source and as the
// destination of a bulk job whose other side is s3rver, reached directly. A file of its own, so that
// the test runner runs it beside the other one. After the table, each fake changes a byte of an upload
// (../support/corrupt-uploads.ts, issue 37).
//
// What goes behind the fault proxy is what carries the bytes, as ferry reaches it in production:
// - OneDrive: all of Graph (simple uploads are PUTs on the API host) and the pre-authenticated
//   download URLs its /content answers redirect to, which the fake names on the proxy's origin;
// - Google Drive: the whole API, whose media downloads (alt=media) and uploads (/upload/…) share
//   its host;
// - Box: the upload host, which takes uploads and here also serves the download URLs
//   (dl.boxcloud.com in real life) that GET /files/{id}/content redirects to; the API host is
//   reached directly.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { FakeBox } from '../fakes/box/server.js';
import type { BoxNode } from '../fakes/box/state.js';
import { FakeDrive } from '../fakes/drive/server.js';
import { FakeOneDrive } from '../fakes/onedrive/server.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { SkippingClock } from '../support/clock.js';
import { corruptedUploadCases } from '../support/corrupt-uploads.js';
import { type FaultProxy, type SeenRequest, startFaultProxy } from '../support/fault-proxy.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import {
  FAULT_APP_ENV,
  inPrefix,
  NO_REUSE,
  RESET_REUSED,
  type Route,
  s3Location,
  storeFaultTable,
} from '../support/store-faults.js';
import {
  type Call,
  createLocation,
  newWorkspace,
  readS3,
  s3Client,
  seedBucket,
} from '../support/transfers.js';

const pathname = (request: SeenRequest) => new URL(request.url, 'http://x').pathname;

/** The last segment of a request's path, decoded: a download URL's token, a file's id. */
const lastSegment = (request: SeenRequest) => decodeURIComponent(pathname(request).split('/').pop() ?? '');

/** The item a Graph path-addressed request names: …/root:/a/b.bin:/content → "/a/b.bin". */
function graphPath(request: SeenRequest): string | undefined {
  const m = /\/root:(\/.*):\/[^/]+$/.exec(pathname(request));
  return m?.[1] === undefined ? undefined : m[1].split('/').map(decodeURIComponent).join('/');
}

/** The key of `objects` a request's header names by the SHA-1 of its bytes (Box's content-md5). */
function keyBySha1(objects: Record<string, Buffer>, sha1: unknown): string | undefined {
  for (const [key, body] of Object.entries(objects)) {
    if (createHash('sha1').update(body).digest('hex') === sha1) return key;
  }
  return undefined;
}

/**
 * The key of `objects` a multipart upload carries, from its Content-Length: its bytes and less than
 * 2 KiB of framing and metadata (a Drive upload names its file in the body only). The objects' sizes
 * are further apart than that.
 */
function keyByLength(objects: Record<string, Buffer>, length: unknown): string | undefined {
  const n = Number(length);
  for (const [key, body] of Object.entries(objects)) {
    if (n >= body.length && n < body.length + 2048) return key;
  }
  return undefined;
}

await eachDatabase('a bulk job under each OAuth store fault', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let s3Seed: S3Client;
  let onedrive: FakeOneDrive;
  let drive: FakeDrive;
  let box: FakeBox;
  let onedriveProxy: FaultProxy;
  let driveProxy: FaultProxy;
  /** In front of Box's upload host, which also serves the download URLs. */
  let boxProxy: FaultProxy;
  const clock = new SkippingClock();

  before(async () => {
    [s3, onedrive, drive, box] = await Promise.all([
      startS3rver(),
      FakeOneDrive.start(),
      FakeDrive.start(),
      new FakeBox().start(),
    ]);
    [onedriveProxy, driveProxy, boxProxy] = await Promise.all([
      startFaultProxy(new URL(onedrive.apiUrl).origin),
      startFaultProxy(drive.url),
      startFaultProxy(new URL(box.uploadUrl).origin),
    ]);
    onedrive.publicOrigin = onedriveProxy.url;
    box.uploadUrl = `${boxProxy.url}/api`;
    s3Seed = s3Client(s3.endpoint);
    t = await startTestApp(database, {
      clock,
      env: {
        ...FAULT_APP_ENV,
        FERRY_ONEDRIVE_API_URL: `${onedriveProxy.url}/v1.0`,
        FERRY_ONEDRIVE_TOKEN_URL: onedrive.tokenUrl,
        FERRY_DRIVE_API_URL: driveProxy.url,
        FERRY_DRIVE_TOKEN_URL: drive.tokenUrl,
        FERRY_BOX_API_URL: box.apiUrl,
        FERRY_BOX_CONTENT_URL: box.uploadUrl,
        FERRY_BOX_TOKEN_URL: box.tokenUrl,
      },
      worker: { pollMs: 50 },
    });
  });
  after(async () => {
    await t?.close();
    s3Seed?.destroy();
    await Promise.all([onedriveProxy?.close(), driveProxy?.close(), boxProxy?.close()]);
    await Promise.all([s3?.close(), onedrive?.close(), drive?.close(), box?.close()]);
  });

  /** The folder (also the s3rver bucket of the other side), Box account and objects of the case now running. */
  let bucket = '';
  let owner = '';
  let objects: Record<string, Buffer> = {};

  /** A location of a new account of `provider`'s fake. */
  async function oauthLocation(call: Call, provider: 'onedrive' | 'drive' | 'box'): Promise<string> {
    const fake = { onedrive, drive, box }[provider];
    owner = unique('acct');
    const { id } = await createLocation(call, { provider, secret: { ...fake.oauth.issue(owner) } });
    return id;
  }

  /**
   * A workspace copying between `provider` (the faulty side) and s3rver: from the provider's
   * `<bucket>/in/`, seeded by `seed`, or to its `<bucket>/out/` from s3rver's.
   */
  async function setup(
    provider: 'onedrive' | 'drive' | 'box',
    side: 'source' | 'destination',
    caseObjects: Record<string, Buffer>,
    seed: (path: string, body: Buffer) => void,
  ): Promise<{ call: Call; from: string; to: string }> {
    objects = caseObjects;
    const call = await newWorkspace(t);
    const [store, other] = await Promise.all([oauthLocation(call, provider), s3Location(call, s3.endpoint)]);
    if (side === 'source') {
      bucket = await seedBucket(s3Seed, {});
      for (const [key, body] of Object.entries(objects)) seed(`${bucket}/in/${key}`, body);
      return { call, from: `${store}:${bucket}/in/`, to: `${other}:${bucket}/out/` };
    }
    bucket = await seedBucket(s3Seed, inPrefix(objects));
    return { call, from: `${other}:${bucket}/in/`, to: `${store}:${bucket}/out/` };
  }

  /** The Box file at `path` in the account of the case, or undefined. */
  function boxFile(path: string): BoxNode | undefined {
    const tree = box.tree(owner);
    let node: BoxNode | undefined = tree.items.get('0');
    for (const name of path.split('/')) {
      node = node && tree.children(node.id).find((child) => child.name === name);
    }
    return node?.type === 'file' ? node : undefined;
  }

  /** Seeds a Box file, making its folders. */
  function boxPut(path: string, body: Buffer): void {
    const tree = box.tree(owner);
    const names = path.split('/');
    const name = names.pop() as string;
    let folder = '0';
    for (const segment of names) {
      folder =
        tree.children(folder).find((child) => child.name === segment)?.id ??
        tree.createFolder(folder, segment).id;
    }
    tree.createFile(folder, name, body);
  }

  const read = {
    s3: (key: string) => readS3(s3Seed, bucket, `out/${key}`),
    onedrive: async (key: string) => onedrive.read(`${bucket}/out/${key}`),
    drive: async (key: string) => {
      // Drive allows two files of one name: a retried upload must not have left a second.
      assert.ok(drive.countNamed(`${bucket}/out`, key) <= 1, `${key}: one file of that name`);
      return drive.read(`${bucket}/out/${key}`);
    },
    box: async (key: string) => boxFile(`${bucket}/out/${key}`)?.content,
  };

  const ROUTES: Route[] = [
    {
      name: 'onedrive source',
      proxy: () => onedriveProxy,
      data: (r) => r.method === 'GET' && r.url.startsWith('/download/'),
      pathOf: (r) => {
        const itemId = onedrive.state.downloads.get(lastSegment(r))?.itemId;
        const item = itemId === undefined ? undefined : onedrive.state.items.get(itemId);
        return item && `/${item.name}`;
      },
      setup: (o) => setup('onedrive', 'source', o, (path, body) => onedrive.put(path, body)),
      read: read.s3,
    },
    {
      name: 'onedrive destination',
      skips: { [RESET_REUSED]: NO_REUSE },
      proxy: () => onedriveProxy,
      // Objects of at most 4 MiB are one PUT …/root:/<path>:/content on Graph.
      data: (r) => r.method === 'PUT' && (pathname(r).endsWith(':/content') || r.url.startsWith('/upload/')),
      pathOf: graphPath,
      setup: (o) => setup('onedrive', 'destination', o, () => {}),
      read: read.onedrive,
    },
    {
      name: 'drive source',
      proxy: () => driveProxy,
      data: (r) => r.method === 'GET' && r.url.startsWith('/drive/v3/files/') && r.url.includes('alt=media'),
      pathOf: (r) => {
        const file = drive.state.get(lastSegment(r));
        return file && `/${file.name}`;
      },
      setup: (o) => setup('drive', 'source', o, (path, body) => drive.put(path, body)),
      read: read.s3,
    },
    {
      name: 'drive destination',
      proxy: () => driveProxy,
      // Objects of at most 5 MB are one multipart upload, their name in its body only.
      data: (r) => r.url.startsWith('/upload/drive/v3/files'),
      pathOf: (r) => {
        const key = keyByLength(objects, r.headers['content-length']);
        return key && `/${key}`;
      },
      setup: (o) => setup('drive', 'destination', o, () => {}),
      read: read.drive,
    },
    {
      name: 'box source',
      skips: { [RESET_REUSED]: NO_REUSE },
      proxy: () => boxProxy,
      data: (r) => r.method === 'GET' && r.url.startsWith('/dl/'),
      pathOf: (r) => {
        const file = box.downloadOf(lastSegment(r));
        return file && `/${file.name}`;
      },
      setup: (o) => setup('box', 'source', o, boxPut),
      read: read.s3,
    },
    {
      name: 'box destination',
      skips: { [RESET_REUSED]: NO_REUSE },
      proxy: () => boxProxy,
      // Objects under Box's 20 MB chunked-upload minimum are one multipart POST …/content.
      data: (r) => r.method === 'POST' && /^\/api\/2\.0\/files\/(\w+\/)?content/.test(r.url),
      pathOf: (r) => {
        const key = keyBySha1(objects, r.headers['content-md5']);
        return key && `/${key}`;
      },
      setup: (o) => setup('box', 'destination', o, () => {}),
      read: read.box,
    },
  ];

  storeFaultTable(() => t, clock, ROUTES);

  const route = (name: string) => ROUTES.find((r) => r.name === name) as Route;
  corruptedUploadCases(
    () => t,
    [
      { route: route('onedrive destination'), server: () => onedrive.server },
      { route: route('drive destination'), server: () => drive.server },
      { route: route('box destination'), server: () => box.server },
    ],
  );
});
