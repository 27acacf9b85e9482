// Bandwidth caps (docs/api.md, "Bandwidth") in one process, on both databases: `bandwidth_limit` on
// POST /v1/copy (400 for a bad value, shown by the transfer and the job), the shared bucket's grants
// (two processes' Bandwidth on one database take from one level), a wait on the bucket that ends at
// once on abort (the bucket alone, and a running capped job whose worker stops), and
// FERRY_WORKSPACE_BANDWIDTH on PUT and GET /v1/files. The caps' accuracy across two `ferry serve`
// processes is test/engine/bandwidth-{sqlite,postgres}.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { BANDWIDTH_MAX, BANDWIDTH_MIN } from '../../src/api/transfers.js';
import { Bandwidth, BURST_SLICES, SLICE_MS } from '../../src/engine/bandwidth.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
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
import { waitUntil } from '../support/wait.js';

const KiB = 1024;

await eachDatabase('bandwidth caps', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let bucket: string;

  before(async () => {
    s3 = await startS3rver();
    client = s3Client(s3.endpoint);
    bucket = await seedBucket(client, {
      'one.bin': randomBytes(4 * KiB),
      'many/a.bin': randomBytes(4 * KiB),
      'slow/a.bin': randomBytes(1024 * KiB),
      'slow/b.bin': randomBytes(1024 * KiB),
    });
    t = await startTestApp(database, {
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_WORKSPACE_BANDWIDTH: '64KiB' },
      worker: true,
    });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await s3.close();
  });

  /** A workspace with two s3 locations under different keys (the bytes stream through ferry). */
  async function setup(): Promise<{ call: Call; a: string; b: string; labelA: string }> {
    const call = await newWorkspace(t);
    const location = (key: string) =>
      createLocation(call, {
        provider: 's3',
        secret: { access_key_id: key, secret_access_key: `secret-${key}` },
        metadata: { endpoint: s3.endpoint },
      });
    const [a, b] = await Promise.all([location('FERRYBWA'), location('FERRYBWB')]);
    return { call, a: a.id, b: b.id, labelA: a.label };
  }

  test('a bandwidth_limit that is not a whole number from 64 KiB/s to 10 GiB/s is 400 naming the field; nothing is queued', async () => {
    const { call, a, b } = await setup();
    const bodies = [
      { from: `${a}:${bucket}/one.bin`, to: `${b}:${bucket}/x/one.bin` },
      { from: `${a}:${bucket}/many/`, to: `${b}:${bucket}/x/` },
    ];
    for (const body of bodies) {
      for (const bad of [0, -1, BANDWIDTH_MIN - 1, 1000.5, BANDWIDTH_MAX + 1, '1MiB', null, true]) {
        const res = await call({
          method: 'POST',
          url: '/v1/copy',
          payload: { ...body, bandwidth_limit: bad },
        });
        assert.equal(res.statusCode, 400, `${JSON.stringify(bad)}: ${res.body}`);
        assert.match(res.json().message, /bandwidth_limit/, `${JSON.stringify(bad)}: ${res.body}`);
      }
    }
    for (const list of ['/v1/transfers', '/v1/jobs']) {
      const res = await call({ method: 'GET', url: list });
      const items = (res.json().transfers ?? res.json().jobs) as unknown[];
      assert.equal(items.length, 0, `${list}: ${res.body}`);
    }
  });

  test('the transfer and the job show their bandwidth_limit; without one they have none', async () => {
    const { call, a, b } = await setup();
    const single = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: {
        from: `${a}:${bucket}/one.bin`,
        to: `${b}:${bucket}/shown/one.bin`,
        bandwidth_limit: 100_000,
      },
    });
    assert.equal(single.statusCode, 202, single.body);
    const transfer = await call({ method: 'GET', url: `/v1/transfers/${single.json().id}` });
    assert.equal(transfer.json().bandwidth_limit, 100_000, transfer.body);

    const bulk = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${a}:${bucket}/many/`, to: `${b}:${bucket}/shown/`, bandwidth_limit: BANDWIDTH_MIN },
    });
    assert.equal(bulk.statusCode, 202, bulk.body);
    const job = await call({ method: 'GET', url: `/v1/jobs/${bulk.json().job_id}` });
    assert.equal(job.json().bandwidth_limit, BANDWIDTH_MIN, job.body);

    const plain = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${a}:${bucket}/many/`, to: `${b}:${bucket}/plain/` },
    });
    const plainJob = await call({ method: 'GET', url: `/v1/jobs/${plain.json().job_id}` });
    assert.equal(plainJob.json().bandwidth_limit, undefined, plainJob.body);
  });

  test("two processes' grants take from one bucket in the database: a slice each, the second owed", async () => {
    // The clock starts now: a row stamped days ago would look stale to the app's own Bandwidth (real
    // clock), whose prune, run by any grant of an earlier test's copy, deletes it between our grants.
    const clock = new ManualClock(Date.now());
    const key = `job:${unique('grants')}`;
    const rate = BANDWIDTH_MIN;
    const slice = (rate * SLICE_MS) / 1000;
    const one = new Bandwidth(t.services.db, clock, undefined);
    const two = new Bandwidth(t.services.db, clock, undefined);
    // A new bucket holds one slice: the first grant is free, the second is owed until it is paid.
    assert.equal(await one.grant(key, rate, slice), 0);
    assert.equal(await two.grant(key, rate, slice), -slice);
    assert.equal(await one.grant(key, rate, slice), -2 * slice);
    // A second later the rate has paid the debt and saved up two slices; never more than a second's.
    clock.advance(1000);
    assert.equal(await two.grant(key, rate, slice), slice);
    clock.advance(60_000);
    assert.equal(await one.grant(key, rate, slice), (BURST_SLICES - 1) * slice);
  });

  test('a copy waiting on the bucket stops at once when aborted', async () => {
    const bandwidth = new Bandwidth(t.services.db, t.services.clock, undefined);
    const take = bandwidth.throttleFor({
      workspaceId: 'w',
      key: `job:${unique('abort')}`,
      limit: BANDWIDTH_MIN,
    });
    assert.ok(take);
    // The first slice lets a large chunk through (the local level goes below zero) ...
    await take(1024 * KiB);
    // ... so the next waits for another grant from the database: here one that never comes, so that
    // nothing but the abort can end the wait (a wait that ignored it would never end).
    bandwidth.grant = () => new Promise<number>(() => {});
    const controller = new AbortController();
    let ended = false;
    const waiting = take(1, controller.signal);
    waiting
      .catch(() => undefined) // read below, by assert.rejects
      .finally(() => {
        ended = true;
      });
    // take() is waiting on the grant once it has returned: the abort comes during the wait.
    controller.abort(new Error('stop'));
    await waitUntil(() => ended, { what: 'the aborted wait to end' });
    await assert.rejects(waiting, /stop/);
  });

  test('FERRY_WORKSPACE_BANDWIDTH caps PUT and GET /v1/files', async () => {
    const { labelA } = await setup();
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `${address}/v1/files/${encodeURIComponent(labelA)}/${bucket}/files/up.bin`;
    const body = randomBytes(256 * KiB);
    const key = (await t.services.apiKeys.create((await workspaceOf(labelA)) as string, { name: 'f' })).token;
    const auth = { authorization: `Bearer ${key}` };
    // 256 KiB at 64 KiB/s: 4 s, less the first slice (16 KiB) and the last chunk (up to 64 KiB), which
    // pass before they are paid for (src/engine/bandwidth.ts): about 3 s each way, against well under a
    // second without the cap.
    const cap = `workspace:${await workspaceOf(labelA)}`;
    let started = Date.now();
    let asked = t.services.bandwidth.waitedFor(cap);
    const put = await fetch(base, { method: 'PUT', headers: auth, body });
    assert.equal(put.status, 201, await put.text());
    const up = (Date.now() - started) / 1000;
    const upWaited = t.services.bandwidth.waitedFor(cap) - asked;
    started = Date.now();
    asked = t.services.bandwidth.waitedFor(cap);
    const got = Buffer.from(await (await fetch(base, { headers: auth })).arrayBuffer());
    const down = (Date.now() - started) / 1000;
    const downWaited = t.services.bandwidth.waitedFor(cap) - asked;
    assert.ok(got.equals(body));
    assert.ok((await readS3(client, bucket, 'files/up.bin'))?.equals(body));
    // The cap holds: neither way is faster than it lets through. That it is no stricter is read from
    // the waits it asked for, not from a timing (which a loaded machine stretches): at most what the
    // bytes cost at the rate, with the largest chunk one way may leave owed to the other.
    const rate = 64 * KiB;
    const chunk = 64 * KiB;
    const most = ((body.length + chunk) / rate) * 1000;
    for (const [what, seconds, waited] of [
      ['upload', up, upWaited],
      ['download', down, downWaited],
    ] as const) {
      assert.ok(seconds >= 2.5, `${what} of 256 KiB took ${seconds} s at 64 KiB/s`);
      assert.ok(waited <= most, `${what} of 256 KiB waited ${waited} ms for the cap, at most ${most}`);
    }
  });

  /** The workspace id of a location, by its label. */
  async function workspaceOf(label: string): Promise<string | undefined> {
    const row = await t.services.db.kysely
      .selectFrom('locations')
      .select('workspace_id')
      .where('label', '=', label)
      .executeTakeFirst();
    return row?.workspace_id;
  }

  test("a worker stopping with a capped job's objects waiting on the bucket hands them back at once", async () => {
    const { call, a, b } = await setup();
    // 2 MiB at 64 KiB/s is half a minute: the objects are certainly waiting when the worker stops.
    const res = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: {
        from: `${a}:${bucket}/slow/`,
        to: `${b}:${bucket}/stopped/`,
        bandwidth_limit: BANDWIDTH_MIN,
      },
    });
    assert.equal(res.statusCode, 202, res.body);
    const id = res.json().job_id as string;
    await waitFor(call, `/v1/jobs/${id}`, (job) => Number(job.bytes_done) > 0);
    const worker = t.worker;
    assert.ok(worker);
    const started = Date.now();
    await worker.stop(100);
    // Objects left waiting on the bucket would hold the stop for the half minute the rate asks; the
    // bound is half that, with room for a loaded machine.
    assert.ok(Date.now() - started < 15_000, `the worker took ${Date.now() - started} ms to stop`);
    const job = await call({ method: 'GET', url: `/v1/jobs/${id}` });
    assert.equal(job.json().counts.succeeded, 0, job.body);
    assert.equal(job.json().counts.pending, 2, job.body);
  });
});
