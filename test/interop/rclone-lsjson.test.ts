// Issue 3, acceptance 2: POST /v1/list on a bucket of s3rver agrees entry by entry with `rclone lsjson`
// (Debian's rclone, /usr/bin/rclone) on the same bucket: name, path, size, isDir and modTime, for the
// bucket root and a sub-folder, recursive and not. The bucket is seeded with the AWS SDK (neither tool
// writes it) and holds nested folders, names with spaces, unicode (NFC and NFD spellings side by side),
// "+", "%", "#", "?", "&", "=" and 0-byte objects.
//
// How the two answers map onto each other:
// - path: rclone's Path is relative to the folder it listed; ferry's is from the location root, bucket
//   first (docs/api.md, "Listing objects"). ferry path = `${listed folder}/${rclone Path}`.
// - size of folders: ferry says 0 (docs/api.md, "Listing objects"). rclone 1.60 says 0 for the
//   common prefixes of a non-recursive listing and -1 ("unknown") for the folders it derives from keys
//   in a recursive one.
// - modTime of folders: S3 has none. ferry leaves it out; rclone prints the time of the listing (a Dir
//   with a zero time reports time.Now()), so folders' times are not compared.
// - modTime of objects, compared as instants:
//   - ferry: the LastModified of ListObjectsV2, written with toISOString (RFC 3339, millisecond
//     precision). s3rver itself keeps whole seconds (it answers "…:14.000Z").
//   - `rclone lsjson` by default: the object's X-Amz-Meta-Mtime if set (the SDK seed sets none), else
//     the Last-Modified header of a HEAD per object — an HTTP-date, whole seconds. Printed RFC 3339
//     with nanoseconds. Compared with ferry's time truncated to the second.
//   - `rclone lsjson --use-server-modtime --no-mimetype`: the listing's LastModified, no HEADs (the same
//     requests ferry makes). Compared exactly.
// - mimeType is not compared: a listing carries none, ferry leaves it out, rclone HEADs for it.
//
// Without /usr/bin/rclone the tests are skipped with the reason, except under CI=true where they fail
// (.ci/run installs Debian's rclone when it is missing).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';

const RCLONE = '/usr/bin/rclone';
const rcloneMissing = !existsSync(RCLONE);
const skip =
  rcloneMissing && process.env.CI !== 'true'
    ? `${RCLONE} is not installed (apt-get install rclone); CI=true makes this a failure`
    : false;

const OBJECTS: Record<string, string> = {
  'top.txt': 'top',
  'empty.bin': '',
  'docs/a.txt': 'aaaa',
  'docs/b c.txt': 'bb',
  'docs/deep/é ü.md': 'deep!',
  'docs/deep/empty inside.txt': '',
  'odd/plus+sign.txt': 'plus',
  'odd/100% done.txt': 'percent',
  'odd/%41%2F literal.txt': 'escapes that must stay as typed',
  'odd/x#y?z&=.txt': 'reserved',
  'odd/sub folder/ünï cødé 日本.txt': 'unicode',
  'odd/sub folder/naïve + 50%/x.txt': 'x',
  'odd/e\u0301 nfd.txt': 'NFD',
  'odd/\u00e9 nfd.txt': 'NFC',
  'only/deep/er/f.txt': 'f',
  'Ü upper/Straße.txt': 'ß',
};

interface FerryEntry {
  name: string;
  path: string;
  size: number;
  isDir: boolean;
  mimeType?: string;
  modTime?: string;
}

interface RcloneEntry {
  Path: string;
  Name: string;
  Size: number;
  IsDir: boolean;
  ModTime: string;
  MimeType?: string;
}

/** An RFC 3339 time as nanoseconds since the epoch, keeping every fractional digit. */
function instant(text: string): bigint {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  assert.ok(match, `not an RFC 3339 time: ${text}`);
  const [, seconds, fraction = '', zone] = match;
  const ms = Date.parse(`${seconds}${zone}`);
  assert.ok(Number.isFinite(ms), `not an RFC 3339 time: ${text}`);
  return BigInt(ms) * 1_000_000n + BigInt(fraction.padEnd(9, '0'));
}

const SECOND = 1_000_000_000n;

await eachDatabase('POST /v1/list agrees with rclone lsjson on s3rver', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let bucket: string;
  let locationId: string;

  before(async () => {
    s3 = await startS3rver();
    t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' } });
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'seed', secretAccessKey: 'seed' },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    bucket = unique('interop').toLowerCase();
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    for (const [key, body] of Object.entries(OBJECTS)) {
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'text/plain' }),
      );
    }
    client.destroy();
    const res = await t.request({
      method: 'POST',
      url: '/v1/locations',
      payload: {
        provider: 's3',
        label: unique('interop'),
        secret: { access_key_id: 'AKIDFERRY', secret_access_key: unique('secret') },
        metadata: { endpoint: s3.endpoint },
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    locationId = res.json().id;
  });
  after(async () => {
    await t?.close();
    await s3?.close();
  });

  async function ferry(folder: string, recurse: boolean): Promise<FerryEntry[]> {
    const res = await t.request({
      method: 'POST',
      url: '/v1/list',
      payload: { id: locationId, path: folder, recurse },
    });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { entries: FerryEntry[] }).entries;
  }

  async function rclone(folder: string, recurse: boolean, serverModTime: boolean): Promise<RcloneEntry[]> {
    if (rcloneMissing) assert.fail(`${RCLONE} is missing: CI must install Debian's rclone package`);
    // Configured by environment only; AWS_CA_BUNDLE (exported on these machines) breaks rclone's S3
    // backend (docs/testing.md).
    const { AWS_CA_BUNDLE: _bundle, ...inherited } = process.env;
    const env = {
      ...inherited,
      RCLONE_CONFIG: '/dev/null',
      RCLONE_CONFIG_FERRYS3_TYPE: 's3',
      RCLONE_CONFIG_FERRYS3_PROVIDER: 'Other',
      RCLONE_CONFIG_FERRYS3_ENDPOINT: s3.endpoint,
      RCLONE_CONFIG_FERRYS3_FORCE_PATH_STYLE: 'true',
      RCLONE_CONFIG_FERRYS3_ACCESS_KEY_ID: 'AKIDRCLONE',
      RCLONE_CONFIG_FERRYS3_SECRET_ACCESS_KEY: 'rclone-secret',
    };
    const args = [
      'lsjson',
      ...(recurse ? ['-R'] : []),
      ...(serverModTime ? ['--use-server-modtime', '--no-mimetype'] : []),
      `ferrys3:${folder}`,
    ];
    const { stdout } = await promisify(execFile)(RCLONE, args, { env, maxBuffer: 16 * 1024 * 1024 });
    return JSON.parse(stdout) as RcloneEntry[];
  }

  /** Asserts the two listings of `folder` hold the same entries, field by field. */
  function assertAgree(
    folder: string,
    recurse: boolean,
    ours: FerryEntry[],
    theirs: RcloneEntry[],
    serverModTime: boolean,
  ): void {
    const byPath = new Map(ours.map((e) => [e.path, e]));
    assert.equal(byPath.size, ours.length, 'ferry lists each path once');
    const mapped = theirs.map((e) => `${folder}/${e.Path}`);
    assert.deepEqual([...byPath.keys()].sort(), [...mapped].sort(), `the same paths under ${folder}`);

    for (const theirsEntry of theirs) {
      const path = `${folder}/${theirsEntry.Path}`;
      const oursEntry = byPath.get(path) as FerryEntry;
      const what = `${path} (recurse ${recurse}, --use-server-modtime ${serverModTime})`;
      assert.equal(oursEntry.name, theirsEntry.Name, `name of ${what}`);
      assert.equal(oursEntry.isDir, theirsEntry.IsDir, `isDir of ${what}`);
      if (theirsEntry.IsDir) {
        assert.equal(oursEntry.size, 0, `ferry folder size of ${what}`);
        assert.ok([0, -1].includes(theirsEntry.Size), `rclone folder size of ${what}: ${theirsEntry.Size}`);
        assert.equal(oursEntry.modTime, undefined, `a folder has no modTime: ${what}`);
        continue;
      }
      assert.equal(oursEntry.size, theirsEntry.Size, `size of ${what}`);
      assert.ok(oursEntry.modTime, `modTime of ${what}`);
      const ourTime = instant(oursEntry.modTime);
      const theirTime = instant(theirsEntry.ModTime);
      if (serverModTime) assert.equal(ourTime, theirTime, `modTime of ${what}`);
      else assert.equal(ourTime - (ourTime % SECOND), theirTime, `modTime (whole seconds) of ${what}`);
    }
  }

  const cases: { title: string; folder: () => string; recurse: boolean }[] = [
    { title: 'the bucket root, immediate children', folder: () => bucket, recurse: false },
    { title: 'the bucket root, recursive', folder: () => bucket, recurse: true },
    { title: 'a sub-folder, immediate children', folder: () => `${bucket}/odd`, recurse: false },
    { title: 'a sub-folder, recursive', folder: () => `${bucket}/odd`, recurse: true },
  ];
  for (const { title, folder, recurse } of cases) {
    test(`${title}: the same entries as rclone lsjson${recurse ? ' -R' : ''}`, { skip }, async () => {
      const ours = await ferry(folder(), recurse);
      assert.ok(ours.length > 0);
      for (const serverModTime of [false, true]) {
        assertAgree(folder(), recurse, ours, await rclone(folder(), recurse, serverModTime), serverModTime);
      }
    });
  }

  test('the recursive listing holds every seeded object once, with its exact name and size', {
    skip,
  }, async () => {
    const files = (await ferry(bucket, true)).filter((e) => !e.isDir);
    assert.deepEqual(
      files.map((e) => [e.path, e.size]).sort(),
      Object.entries(OBJECTS)
        .map(([key, body]) => [`${bucket}/${key}`, Buffer.byteLength(body)])
        .sort(),
    );
  });
});
