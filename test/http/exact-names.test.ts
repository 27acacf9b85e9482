// docs/api.md "Exact names" through HTTP on both databases, on s3rver: `"literal": true` makes every
// path of a move, remove, remove preview or share body exact bytes, so `[ab].txt` beside `a.txt` and
// `b.txt` is that one file; without it `[ab].txt` is a pattern, and `\` escapes inside a pattern. Also
// POST /move/preview, and a queued literal move of `report*.txt`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import {
  type Call,
  createLocation,
  newWorkspace,
  readS3,
  s3Client,
  seedBucket,
  waitFor,
} from '../support/transfers.js';

const THREE = { 'in/[ab].txt': 'AB', 'in/a.txt': 'A', 'in/b.txt': 'B' };

await eachDatabase('exact names', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  before(async () => {
    s3 = await startS3rver();
    client = s3Client(s3.endpoint);
    t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' }, worker: true });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await s3.close();
  });

  async function setup(seed: Record<string, string>): Promise<{ call: Call; at: string; bucket: string }> {
    const call = await newWorkspace(t);
    const { label } = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKIDNAMES', secret_access_key: 'names-secret' },
      metadata: { endpoint: s3.endpoint },
    });
    const bucket = await seedBucket(client, seed);
    return { call, at: `${label}/${bucket}`, bucket };
  }

  async function present(bucket: string, keys: string[]): Promise<string[]> {
    const out: string[] = [];
    for (const k of keys) if ((await readS3(client, bucket, k)) !== undefined) out.push(k);
    return out;
  }

  test('remove preview: literal names the one file; without it [ab] is a class, and \\[ escapes it', async () => {
    const { call, at, bucket } = await setup(THREE);
    const preview = async (payload: Record<string, unknown>) => {
      const res = await call({ method: 'POST', url: '/remove/preview', payload });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json().entries as { path: string }[]).map((e) => e.path).sort();
    };
    assert.deepEqual(await preview({ path: `${at}/in/[ab].txt`, literal: true }), [`${bucket}/in/[ab].txt`]);
    assert.deepEqual(await preview({ path: `${at}/in/[ab].txt` }), [
      `${bucket}/in/a.txt`,
      `${bucket}/in/b.txt`,
    ]);
    // Inside a pattern `\` makes the next character literal: `\[` is a bracket, `[t]` the glob.
    assert.deepEqual(await preview({ path: `${at}/in/\\[ab].tx[t]` }), [`${bucket}/in/[ab].txt`]);
    // A path with no unescaped glob character is no pattern: exact bytes, backslash included (404 here).
    const escapedOnly = await call({
      method: 'POST',
      url: '/remove/preview',
      payload: { path: `${at}/in/\\[ab].txt` },
    });
    assert.equal(escapedOnly.statusCode, 404, escapedOnly.body);
    assert.deepEqual(await preview({ path: [`${at}/in/a.txt`, `${at}/in/[ab].txt`], literal: true }), [
      `${bucket}/in/[ab].txt`,
      `${bucket}/in/a.txt`,
    ]);
    const missing = await call({
      method: 'POST',
      url: '/remove/preview',
      payload: { path: `${at}/in/[xy].txt`, literal: true },
    });
    assert.equal(missing.statusCode, 404, missing.body);
    const notBool = await call({
      method: 'POST',
      url: '/remove/preview',
      payload: { path: `${at}/in/a.txt`, literal: 'yes' },
    });
    assert.equal(notBool.statusCode, 400, notBool.body);
  });

  test('remove with literal removes [ab].txt only, in the worker', async () => {
    const { call, at, bucket } = await setup(THREE);
    const res = await call({
      method: 'POST',
      url: '/remove',
      payload: { path: `${at}/in/[ab].txt`, literal: true },
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal((await waitFor(call, `/v1/transfers/${res.json().id}`)).status, 'complete');
    assert.deepEqual(await present(bucket, Object.keys(THREE)), ['in/a.txt', 'in/b.txt']);
  });

  test('move with literal moves [ab].txt only, keeping its name in a destination folder', async () => {
    const { call, at, bucket } = await setup(THREE);
    const res = await call({
      method: 'POST',
      url: '/move',
      payload: { from: `${at}/in/[ab].txt`, to: `${at}/out/`, literal: true },
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal((await waitFor(call, `/v1/transfers/${res.json().id}`)).status, 'complete');
    assert.deepEqual(await present(bucket, Object.keys(THREE)), ['in/a.txt', 'in/b.txt']);
    assert.equal(String(await readS3(client, bucket, 'out/[ab].txt')), 'AB');
    assert.equal(await readS3(client, bucket, 'out/a.txt'), undefined);
  });

  test('share with literal shares [ab].txt; without it the pattern matches 2 files (400)', async () => {
    const { call, at } = await setup(THREE);
    const exact = await call({
      method: 'POST',
      url: '/share',
      payload: { file: `${at}/in/[ab].txt`, literal: true },
    });
    assert.equal(exact.statusCode, 201, exact.body);
    const list = await call({ method: 'GET', url: '/v1/shares' });
    assert.deepEqual(
      (list.json().shares as { source: string }[]).map((s) => s.source.slice(s.source.indexOf('/') + 1)),
      [`${at.slice(at.indexOf('/') + 1)}/in/[ab].txt`],
    );
    const pattern = await call({ method: 'POST', url: '/share', payload: { file: `${at}/in/[ab].txt` } });
    assert.equal(pattern.statusCode, 400, pattern.body);
    assert.match(pattern.body, /matches 2 files/);
  });

  test('move preview answers {from, to} for each object as the worker would move it, and moves nothing', async () => {
    const seed = { 'r/report*.txt': '1', 'r/report-final.txt': '22', 'r/sub/report-x.txt': '3' };
    const { call, at, bucket } = await setup(seed);
    const preview = async (payload: Record<string, unknown>) => {
      const res = await call({ method: 'POST', url: '/move/preview', payload });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json().entries as { from: string; to: string }[]).sort((x, y) =>
        x.from < y.from ? -1 : 1,
      );
    };
    assert.deepEqual(await preview({ from: `${at}/r/report*.txt`, to: `${at}/out/` }), [
      { from: `${at}/r/report*.txt`, to: `${at}/out/report*.txt` },
      { from: `${at}/r/report-final.txt`, to: `${at}/out/report-final.txt` },
    ]);
    assert.deepEqual(await preview({ from: `${at}/r/**/report-*.txt`, to: `${at}/out/` }), [
      { from: `${at}/r/report-final.txt`, to: `${at}/out/report-final.txt` },
      { from: `${at}/r/sub/report-x.txt`, to: `${at}/out/sub/report-x.txt` },
    ]);
    assert.deepEqual(await preview({ from: `${at}/r/report*.txt`, to: `${at}/out/`, literal: true }), [
      { from: `${at}/r/report*.txt`, to: `${at}/out/report*.txt` },
    ]);
    assert.deepEqual(
      await preview({ from: `${at}/r/report*.txt`, to: `${at}/out/renamed.txt`, literal: true }),
      [{ from: `${at}/r/report*.txt`, to: `${at}/out/renamed.txt` }],
    );
    const missing = await call({
      method: 'POST',
      url: '/move/preview',
      payload: { from: `${at}/r/ghost.txt`, to: `${at}/out/` },
    });
    assert.equal(missing.statusCode, 404, missing.body);
    const folder = await call({
      method: 'POST',
      url: '/move/preview',
      payload: { from: `${at}/r/*.txt`, to: `${at}/out/one.txt` },
    });
    assert.equal(folder.statusCode, 400, folder.body);
    assert.deepEqual(
      await present(bucket, Object.keys(seed)),
      Object.keys(seed),
      'the preview moved nothing',
    );
  });

  test('a queued literal move of report*.txt moves only that file', async () => {
    const seed = { 'r/report*.txt': '1', 'r/report-final.txt': '22' };
    const { call, at, bucket } = await setup(seed);
    const res = await call({
      method: 'POST',
      url: '/move',
      payload: { from: `${at}/r/report*.txt`, to: `${at}/out/`, literal: true },
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal((await waitFor(call, `/v1/transfers/${res.json().id}`)).status, 'complete');
    assert.deepEqual(await present(bucket, ['r/report*.txt', 'r/report-final.txt', 'out/report-final.txt']), [
      'r/report-final.txt',
    ]);
    assert.equal(String(await readS3(client, bucket, 'out/report*.txt')), '1');
  });
});
