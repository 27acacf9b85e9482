// docs/api.md "Verify" through HTTP on both databases, with a worker in the process and real s3rver and
// azurite behind the locations: two prefixes compared object by object (equal, differ by content at the
// same size, missing on each side) in each mode, with a filter, reported as NDJSON and CSV, counted on
// the job, and nothing written; between s3 and a blob whose listing has no MD5 the bytes are read; a
// schedule's verify action starts a verify job.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { BlobServiceClient } from '@azure/storage-blob';
import { startTestApp, type TestApp } from '../support/app.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type AzuriteHandle, startAzurite } from '../support/azurite.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import {
  azureService,
  type Call,
  createLocation,
  newWorkspace,
  s3Client,
  seedBucket,
  waitFor,
} from '../support/transfers.js';

interface Line {
  key: string;
  outcome: string;
  size: number | null;
  bytes: number;
  reason?: string;
  source_hash?: string;
  destination_hash?: string;
}

await eachDatabase('verify', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let azurite: AzuriteHandle;
  let client: S3Client;
  let azure: BlobServiceClient;
  let proxy: FaultProxy;
  before(async () => {
    [s3, azurite] = await Promise.all([startS3rver(), startAzurite()]);
    proxy = await startFaultProxy(s3.endpoint);
    client = s3Client(s3.endpoint);
    azure = azureService(azurite);
    t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' }, worker: true });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await proxy.close();
    await Promise.all([s3.close(), azurite.close()]);
  });

  async function setup(): Promise<{ call: Call; a: string; b: string; az: string }> {
    const call = await newWorkspace(t);
    const secret = { access_key_id: 'AKIDVERIFY', secret_access_key: 'verify-secret' };
    const metadata = { endpoint: s3.endpoint };
    const a = await createLocation(call, { provider: 's3', secret, metadata });
    const b = await createLocation(call, { provider: 's3', secret, metadata });
    const az = await createLocation(call, {
      provider: 'azureblob',
      secret: { access_key_id: AZURITE_ACCOUNT, secret_access_key: AZURITE_KEY },
      metadata: { endpoint: azurite.endpoint },
    });
    return { call, a: a.id, b: b.id, az: az.id };
  }

  async function verify(call: Call, payload: Record<string, unknown>) {
    const res = await call({ method: 'POST', url: '/v1/verify', payload });
    assert.equal(res.statusCode, 202, res.body);
    const accepted = res.json();
    assert.deepEqual(Object.keys(accepted).sort(), ['job_id', 'status']);
    assert.equal(accepted.status, 'planning');
    const job = await waitFor(call, `/v1/jobs/${accepted.job_id}`);
    return job as typeof job & { job_id: string; counts: Record<string, number> };
  }

  async function report(call: Call, jobId: string): Promise<Map<string, Line>> {
    const res = await call({ method: 'GET', url: `/v1/jobs/${jobId}/report` });
    assert.equal(res.statusCode, 200, res.body);
    const lines = res.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Line);
    return new Map(lines.map((l) => [l.key, l]));
  }

  /** Every key and ETag of a bucket: what a verify must leave as it found it. */
  async function listing(bucket: string): Promise<string[]> {
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    return (listed.Contents ?? []).map((o) => `${o.Key} ${o.ETag} ${o.Size}`).sort();
  }

  /** A source and a destination prefix: one object equal, one differing by content at the same size, one on each side only. */
  async function pair(): Promise<{ src: string; dst: string }> {
    const src = await seedBucket(client, {
      'p/same.txt': 'the same bytes',
      'p/sub/changed.txt': 'abcdef',
      'p/only-here.txt': 'source only',
      'p/skip.bin': 'left out by the filter',
    });
    const dst = await seedBucket(client, {
      'q/same.txt': 'the same bytes',
      'q/sub/changed.txt': 'abcdeF',
      'q/only-there.txt': 'destination only',
      'q/skip.bin': 'left out, and different',
    });
    return { src, dst };
  }

  const FOUR = {
    total: 5,
    pending: 0,
    succeeded: 5,
    skipped: 0,
    failed: 0,
    deleted: 0,
    size_only: 0,
  };

  test('checksum (the default) tells equal, differ by content at one size, and missing on each side, from the listings; nothing is written', async () => {
    const { call, a, b } = await setup();
    const { src, dst } = await pair();
    const before = [await listing(src), await listing(dst)];
    const job = await verify(call, { from: `${a}:${src}/p/`, to: `${b}:${dst}/q/` });
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.equal(job.kind, 'verify');
    assert.equal(job.mode, 'checksum');
    assert.deepEqual(job.counts, {
      ...FOUR,
      equal: 1,
      differ: 2,
      missing_in_destination: 1,
      missing_in_source: 1,
    });
    const lines = await report(call, job.job_id);
    assert.equal(lines.size, 5);
    assert.equal(lines.get('same.txt')?.outcome, 'equal');
    assert.equal(lines.get('same.txt')?.reason, 'by checksum (md5, listed)');
    assert.match(String(lines.get('same.txt')?.source_hash), /^md5:[0-9a-f]{32}$/);
    assert.equal(lines.get('same.txt')?.source_hash, lines.get('same.txt')?.destination_hash);
    assert.equal(lines.get('sub/changed.txt')?.outcome, 'differ');
    assert.equal(lines.get('sub/changed.txt')?.reason, 'the md5 differs (listed)');
    assert.notEqual(
      lines.get('sub/changed.txt')?.source_hash,
      lines.get('sub/changed.txt')?.destination_hash,
    );
    assert.equal(lines.get('skip.bin')?.outcome, 'differ');
    assert.match(String(lines.get('skip.bin')?.reason), /^the sizes differ: 22 bytes at the source, 23/);
    assert.deepEqual(lines.get('only-here.txt'), {
      key: 'only-here.txt',
      outcome: 'missing_in_destination',
      size: 11,
      bytes: 0,
      attempts: 0,
      reason: 'not at the destination',
    });
    assert.equal(lines.get('only-there.txt')?.outcome, 'missing_in_source');
    assert.equal(lines.get('only-there.txt')?.size, 16);
    // The listings told everything: no byte was read.
    assert.equal(job.bytes_done, 0);
    assert.deepEqual([await listing(src), await listing(dst)], before, 'a verify writes nothing');

    const csv = await call({
      method: 'GET',
      url: `/v1/jobs/${job.job_id}/report`,
      headers: { accept: 'text/csv' },
    });
    assert.equal(csv.statusCode, 200, csv.body);
    const rows = csv.body.trim().split('\r\n');
    assert.equal(
      rows[0],
      'key,outcome,size,bytes,attempts,error,reason,source_hash,destination_hash,verified,verified_by',
    );
    assert.ok(rows.includes('only-there.txt,missing_in_source,16,0,0,,not at the source,,,,'), csv.body);
    assert.ok(
      rows.some((r) => r.startsWith('sub/changed.txt,differ,6,0,0,,the md5 differs (listed),md5:')),
      csv.body,
    );
  });

  test('a filter leaves objects out of the comparison on both sides', async () => {
    const { call, a, b } = await setup();
    const { src, dst } = await pair();
    const job = await verify(call, {
      from: `${a}:${src}/p/`,
      to: `${b}:${dst}/q/`,
      filter: { exclude: ['*.bin'] },
    });
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.deepEqual(job.filter, { exclude: ['*.bin'] });
    assert.deepEqual(job.counts, {
      ...FOUR,
      total: 4,
      succeeded: 4,
      equal: 1,
      differ: 1,
      missing_in_destination: 1,
      missing_in_source: 1,
    });
    assert.equal((await report(call, job.job_id)).has('skip.bin'), false);
  });

  test('size compares sizes only: content that differs at one size is equal', async () => {
    const { call, a, b } = await setup();
    const { src, dst } = await pair();
    const job = await verify(call, { from: `${a}:${src}/p/`, to: `${b}:${dst}/q/`, mode: 'size' });
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.equal(job.mode, 'size');
    assert.deepEqual(job.counts, {
      ...FOUR,
      equal: 2,
      differ: 1,
      missing_in_destination: 1,
      missing_in_source: 1,
    });
    const lines = await report(call, job.job_id);
    assert.equal(lines.get('sub/changed.txt')?.outcome, 'equal');
    assert.equal(lines.get('sub/changed.txt')?.reason, 'by size');
    assert.equal(job.bytes_done, 0);
  });

  test('download reads and hashes both sides of every object on both, whatever the listings report', async () => {
    const { call, a, b } = await setup();
    const { src, dst } = await pair();
    const job = await verify(call, { from: `${a}:${src}/p/`, to: `${b}:${dst}/q/`, mode: 'download' });
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.deepEqual(job.counts, {
      ...FOUR,
      equal: 1,
      differ: 2,
      missing_in_destination: 1,
      missing_in_source: 1,
    });
    const lines = await report(call, job.job_id);
    const same = lines.get('same.txt');
    assert.equal(same?.outcome, 'equal');
    assert.equal(same?.reason, 'by checksum (md5, both read)');
    assert.equal(same?.size, 14);
    assert.equal(same?.bytes, 28, 'both sides read');
    const changed = lines.get('sub/changed.txt');
    assert.equal(changed?.outcome, 'differ');
    assert.equal(changed?.reason, 'the md5 differs (both read)');
    assert.equal(changed?.bytes, 12);
    // Sizes that differ need no read.
    assert.equal(lines.get('skip.bin')?.bytes, 0);
    assert.equal(job.bytes_done, 40);
  });

  test('between listings with no hash in common, checksum reads the bytes of the side that lacks one', async () => {
    const { call, a, az } = await setup();
    const src = await seedBucket(client, { 'd/same.txt': 'twelve bytes', 'd/other.txt': 'twelve bytes' });
    const container = unique('c').toLowerCase();
    const containerClient = azure.getContainerClient(container);
    await containerClient.create();
    // Blobs committed from blocks carry no Content-MD5: their listing and stat report no hash.
    for (const [name, body] of [
      ['v/same.txt', 'twelve bytes'],
      ['v/other.txt', 'twelve bytez'],
    ] as const) {
      const blob = containerClient.getBlockBlobClient(name);
      const id = Buffer.from('block-0').toString('base64');
      await blob.stageBlock(id, body, Buffer.byteLength(body));
      await blob.commitBlockList([id]);
      const props = await blob.getProperties();
      assert.equal(props.contentMD5, undefined, 'the blob has no MD5 for the test to mean anything');
    }
    const job = await verify(call, { from: `${a}:${src}/d/`, to: `${az}:${container}/v/` });
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.deepEqual(job.counts, {
      ...FOUR,
      total: 2,
      succeeded: 2,
      equal: 1,
      differ: 1,
      missing_in_destination: 0,
      missing_in_source: 0,
    });
    const lines = await report(call, job.job_id);
    assert.equal(lines.get('same.txt')?.outcome, 'equal');
    assert.equal(lines.get('same.txt')?.reason, 'by checksum (md5, the destination read)');
    assert.equal(lines.get('same.txt')?.bytes, 12, 'only the destination read: the source reports its MD5');
    assert.equal(lines.get('other.txt')?.outcome, 'differ');
    assert.equal(lines.get('other.txt')?.reason, 'the md5 differs (the destination read)');
    assert.equal(job.bytes_done, 24);
  });

  test('a destination bucket that does not exist holds nothing: every source object is missing there', async () => {
    const { call, a, b } = await setup();
    const { src } = await pair();
    const job = await verify(call, {
      from: `${a}:${src}/p/`,
      to: `${b}:${unique('nobucket').toLowerCase()}/q/`,
    });
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.deepEqual(job.counts, {
      ...FOUR,
      total: 4,
      succeeded: 4,
      equal: 0,
      differ: 0,
      missing_in_destination: 4,
      missing_in_source: 0,
    });
  });

  test('a read refused fails its object, counted in none of the findings, the job partial; a retry compares it', async () => {
    const { call, b } = await setup();
    const through = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKIDVERIFY', secret_access_key: 'verify-secret' },
      metadata: { endpoint: proxy.url },
    });
    const { src, dst } = await pair();
    // The source's same.txt refuses its one read (403: not retried), its stat and listing pass.
    proxy.failWhen((r) => r.method === 'GET' && r.url.startsWith(`/${src}/p/same.txt`), {
      status: 403,
      headers: { 'content-type': 'application/xml' },
      body: '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>',
    });
    const body = { from: `${through.id}:${src}/p/`, to: `${b}:${dst}/q/`, mode: 'download' };
    const job = await verify(call, body);
    assert.equal(job.status, 'partial', JSON.stringify(job));
    assert.deepEqual(job.counts, {
      ...FOUR,
      succeeded: 4,
      failed: 1,
      equal: 0,
      differ: 2,
      missing_in_destination: 1,
      missing_in_source: 1,
    });
    const failures = (await call({ method: 'GET', url: `/v1/jobs/${job.job_id}/failures` })).json().failures;
    assert.deepEqual(
      failures.map((f: { key: string }) => f.key),
      ['same.txt'],
    );
    assert.equal((await report(call, job.job_id)).get('same.txt')?.outcome, 'failed');

    const retried = await call({ method: 'POST', url: `/v1/jobs/${job.job_id}/retry` });
    assert.equal(retried.statusCode, 202, retried.body);
    const again = (await waitFor(call, `/v1/jobs/${job.job_id}`)) as typeof job;
    assert.equal(again.status, 'complete', JSON.stringify(again));
    assert.deepEqual(again.counts, {
      ...FOUR,
      equal: 1,
      differ: 2,
      missing_in_destination: 1,
      missing_in_source: 1,
    });
    assert.equal((await report(call, job.job_id)).get('same.txt')?.outcome, 'equal');
  });

  test('a key with scope read may verify; a bad mode and a prefix onto itself are 400', async () => {
    const { call, a, b } = await setup();
    const { src, dst } = await pair();
    const key = await t.services.apiKeys.create(
      (
        await t.services.db.kysely
          .selectFrom('locations')
          .select('workspace_id')
          .where('id', '=', a)
          .executeTakeFirstOrThrow()
      ).workspace_id,
      { name: 'reader', scopes: ['read'] },
    );
    const reader: Call = (options) => t.request({ ...options, token: key.token });
    const job = await verify(reader, { from: `${a}:${src}/p/`, to: `${b}:${dst}/q/`, mode: 'size' });
    assert.equal(job.status, 'complete');
    const bad = await call({
      method: 'POST',
      url: '/v1/verify',
      payload: { from: `${a}:${src}/p/`, to: `${b}:${dst}/q/`, mode: 'crc' },
    });
    assert.equal(bad.statusCode, 400, bad.body);
    const self = await call({
      method: 'POST',
      url: '/v1/verify',
      payload: { from: `${a}:${src}/p/`, to: `${a}:${src}/p/` },
    });
    assert.equal(self.statusCode, 400, self.body);
    const noPrefix = await call({
      method: 'POST',
      url: '/v1/verify',
      payload: { from: `${a}:${src}/p/same.txt`, to: `${b}:${dst}/q/` },
    });
    assert.equal(noPrefix.statusCode, 400, noPrefix.body);
  });

  test("a schedule's verify action runs a verify job, with the schedule's id and the run's counts", async () => {
    const { call, a, b } = await setup();
    const { src, dst } = await pair();
    const action = { verify: { from: `${a}:${src}/p/`, to: `${b}:${dst}/q/`, mode: 'size' } };
    const created = await call({
      method: 'POST',
      url: '/v1/schedules',
      payload: { name: 'check', every: 'every day at 03:00', action },
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(created.json().action, action);
    const { id } = created.json();
    const run = await call({ method: 'POST', url: `/v1/schedules/${id}/run` });
    assert.equal(run.statusCode, 202, run.body);
    const job = await waitFor(call, `/v1/jobs/${run.json().job_id}`);
    assert.equal(job.kind, 'verify');
    assert.equal(job.schedule_id, id);
    assert.equal(job.status, 'complete');
    const shown = await waitFor(call, `/v1/schedules/${id}`, (s) => {
      const runs = s.runs as Array<{ job_status?: string }>;
      return runs[0]?.job_status === 'complete';
    });
    const runs = shown.runs as Array<{ counts?: Record<string, number> }>;
    assert.equal(runs[0]?.counts?.equal, 2);
    assert.equal(runs[0]?.counts?.missing_in_source, 1);
    const invalid = await call({
      method: 'POST',
      url: '/v1/schedules',
      payload: {
        name: 'bad',
        every: 'every day',
        action: { verify: { from: `${a}:${src}/p/`, to: `${b}:${dst}/q/`, mode: 'x' } },
      },
    });
    assert.equal(invalid.statusCode, 400, invalid.body);
  });
});
