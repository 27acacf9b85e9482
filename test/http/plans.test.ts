// docs/api.md "Plans" through HTTP on both databases: a dry run of a bulk copy, a move and a remove
// changes nothing and answers a plan; running it does exactly the plan: an object changed since the
// plan (another size or ETag, or gone) is left alone and reported skipped with the reason, one that
// appeared since is left alone and reported "not in the plan"; a plan runs once (409), expires (410,
// with the injected clock), is not another workspace's (404), pages its entries; retention prunes it.
// s3rver for copy and remove, azurite for move.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { BlobServiceClient } from '@azure/storage-blob';
import { Registry } from 'prom-client';
import { wholeWorkspace } from '../../src/domain/caller.js';
import { Plans } from '../../src/domain/plans/plans.js';
import { Pruner } from '../../src/domain/retention/pruner.js';
import { newId } from '../../src/ids.js';
import { PLAN_TTL_MS } from '../../src/lifecycle/plans.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type AzuriteHandle, startAzurite } from '../support/azurite.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import {
  azureService,
  type Call,
  createLocation,
  newWorkspace,
  readAzure,
  readS3,
  s3Client,
  seedBucket,
  waitFor,
} from '../support/transfers.js';

await eachDatabase('plans', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let azurite: AzuriteHandle;
  let azure: BlobServiceClient;
  const clock = new ManualClock(Date.now());
  before(async () => {
    s3 = await startS3rver();
    client = s3Client(s3.endpoint);
    azurite = await startAzurite();
    azure = azureService(azurite);
    t = await startTestApp(database, { clock, worker: true, env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' } });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await s3.close();
    await azurite.close();
  });

  async function s3Location(): Promise<{ call: Call; loc: string; label: string }> {
    const call = await newWorkspace(t);
    const { id, label } = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKIDPLAN', secret_access_key: 'plan-secret' },
      metadata: { endpoint: s3.endpoint },
    });
    return { call, loc: id, label };
  }

  const put = (bucket: string, key: string, body: string) =>
    client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));

  async function failures(call: Call, url: string) {
    const res = await call({ method: 'GET', url });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().failures as Array<{ key: string; error: string; outcome?: string }>)
      .map((f) => `${f.key}: ${f.error}${f.outcome ? ` (${f.outcome})` : ''}`)
      .sort();
  }

  test('a copy dry run copies nothing; its run copies exactly the plan, changed and new objects left alone', async () => {
    const { call, label } = await s3Location();
    const bucket = await seedBucket(client, { 'in/a.txt': 'A', 'in/b.txt': 'BB', 'in/c.txt': 'CCC' });
    const dest = await seedBucket(client, {});
    const dry = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${label}:${bucket}/in/`, to: `${label}:${dest}/out/`, dry_run: true },
    });
    assert.equal(dry.statusCode, 200, dry.body);
    const plan = dry.json();
    assert.equal(plan.kind, 'copy');
    assert.deepEqual(plan.counts, { copy: 3 });
    assert.equal(plan.total, 3);
    assert.equal(Date.parse(plan.expires_at) - Date.parse(plan.created_at), PLAN_TTL_MS);
    assert.deepEqual(
      plan.entries
        .map((e: { key: string; size: number; action: string }) => [e.key, e.size, e.action])
        .sort(),
      [
        ['a.txt', 1, 'copy'],
        ['b.txt', 2, 'copy'],
        ['c.txt', 3, 'copy'],
      ],
    );
    assert.ok(
      plan.entries.every((e: { etag?: string }) => typeof e.etag === 'string'),
      'the ETags seen',
    );
    assert.equal(plan.next_cursor, undefined);
    assert.equal(await readS3(client, dest, 'out/a.txt'), undefined, 'the dry run copied nothing');
    const jobs = await call({ method: 'GET', url: '/v1/jobs' });
    assert.deepEqual(jobs.json().jobs, [], 'and queued nothing');

    // Between plan and run: b changes size, c changes content (same size, another ETag), d appears.
    await put(bucket, 'in/b.txt', 'BBBB');
    await put(bucket, 'in/c.txt', 'xyz');
    await put(bucket, 'in/d.txt', 'D');

    const run = await call({ method: 'POST', url: `/v1/plans/${plan.plan_id}/run` });
    assert.equal(run.statusCode, 202, run.body);
    assert.equal(run.json().status, 'planning');
    const job = await waitFor(call, `/v1/jobs/${run.json().job_id}`);
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.equal(job.plan_id, plan.plan_id);
    assert.deepEqual(job.counts, {
      total: 4,
      pending: 0,
      succeeded: 1,
      skipped: 3,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(String(await readS3(client, dest, 'out/a.txt')), 'A');
    assert.equal(await readS3(client, dest, 'out/b.txt'), undefined, 'changed size: left alone');
    assert.equal(await readS3(client, dest, 'out/c.txt'), undefined, 'changed ETag: left alone');
    assert.equal(await readS3(client, dest, 'out/d.txt'), undefined, 'new: left alone');
    const reported = await failures(call, `/v1/jobs/${job.job_id}/failures`);
    assert.equal(reported.length, 3, reported.join('\n'));
    assert.equal(reported[0], 'b.txt: changed since the plan: size 2 → 4 (skipped)');
    assert.match(reported[1] as string, /^c\.txt: changed since the plan: ETag .+ → .+ \(skipped\)$/);
    assert.equal(reported[2], 'd.txt: not in the plan (skipped)');

    // A plan runs once: the second run names the job.
    const again = await call({ method: 'POST', url: `/v1/plans/${plan.plan_id}/run` });
    assert.equal(again.statusCode, 409, again.body);
    assert.match(again.json().message, new RegExp(`job ${job.job_id}`));
    const read = await call({ method: 'GET', url: `/v1/plans/${plan.plan_id}` });
    assert.equal(read.json().job_id, job.job_id);
    assert.ok(read.json().ran_at);
  });

  test('a remove dry run removes nothing; its run removes exactly the plan', async () => {
    const { call, label } = await s3Location();
    const bucket = await seedBucket(client, { 'tmp/a.log': 'a', 'tmp/b.log': 'b', 'tmp/keep.txt': 'k' });
    const dry = await call({
      method: 'POST',
      url: '/remove',
      payload: { path: `${label}/${bucket}/tmp/*.log`, dry_run: true },
    });
    assert.equal(dry.statusCode, 200, dry.body);
    const plan = dry.json();
    assert.equal(plan.kind, 'remove');
    assert.deepEqual(plan.counts, { remove: 2 });
    assert.deepEqual(plan.entries.map((e: { path: string }) => e.path).sort(), [
      `${label}/${bucket}/tmp/a.log`,
      `${label}/${bucket}/tmp/b.log`,
    ]);
    assert.equal(String(await readS3(client, bucket, 'tmp/a.log')), 'a', 'the dry run removed nothing');

    await put(bucket, 'tmp/c.log', 'c'); // appears after the plan
    const run = await call({ method: 'POST', url: `/v1/plans/${plan.plan_id}/run` });
    assert.equal(run.statusCode, 202, run.body);
    assert.equal(run.json().status, 'queued');
    const done = await waitFor(call, `/v1/transfers/${run.json().id}`);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.equal(done.kind, 'remove');
    assert.deepEqual(done.counts, {
      total: 3,
      pending: 0,
      succeeded: 2,
      skipped: 1,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(await readS3(client, bucket, 'tmp/a.log'), undefined);
    assert.equal(await readS3(client, bucket, 'tmp/b.log'), undefined);
    assert.equal(String(await readS3(client, bucket, 'tmp/c.log')), 'c', 'not in the plan: kept');
    assert.deepEqual(await failures(call, `/v1/transfers/${done.id}/failures`), [
      `${bucket}/tmp/c.log: not in the plan (skipped)`,
    ]);
    const again = await call({ method: 'POST', url: `/v1/plans/${plan.plan_id}/run` });
    assert.equal(again.statusCode, 409);
    assert.match(again.json().message, new RegExp(`transfer ${done.id}`));
  });

  test('a remove of one plain path runs by the plan: changed since, it is kept', async () => {
    const { call, label } = await s3Location();
    const bucket = await seedBucket(client, { 'one.txt': 'one' });
    const dry = await call({
      method: 'POST',
      url: '/remove',
      payload: { path: `${label}/${bucket}/one.txt`, dry_run: true },
    });
    assert.equal(dry.statusCode, 200, dry.body);
    assert.deepEqual(
      dry.json().entries.map((e: { size: number }) => e.size),
      [3],
    );
    await put(bucket, 'one.txt', 'one more');
    const run = await call({ method: 'POST', url: `/v1/plans/${dry.json().plan_id}/run` });
    assert.equal(run.statusCode, 202, run.body);
    const done = await waitFor(call, `/v1/transfers/${run.json().id}`);
    assert.deepEqual(done.counts, {
      total: 1,
      pending: 0,
      succeeded: 0,
      skipped: 1,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(String(await readS3(client, bucket, 'one.txt')), 'one more');
    assert.deepEqual(await failures(call, `/v1/transfers/${done.id}/failures`), [
      `${bucket}/one.txt: changed since the plan: size 3 → 8 (skipped)`,
    ]);
  });

  test('a move dry run on azure moves nothing; its run moves exactly the plan', async () => {
    const call = await newWorkspace(t);
    const { label } = await createLocation(call, {
      provider: 'azureblob',
      secret: { access_key_id: AZURITE_ACCOUNT, secret_access_key: AZURITE_KEY },
      metadata: { endpoint: azurite.endpoint },
    });
    const container = unique('pm').toLowerCase();
    const box = azure.getContainerClient(container);
    await box.create();
    const upload = (name: string, body: string) => box.getBlockBlobClient(name).upload(body, body.length);
    await upload('in/x.txt', 'x');
    await upload('in/y.txt', 'yy');
    await upload('in/z.txt', 'zzz');
    const dry = await call({
      method: 'POST',
      url: '/move',
      payload: { from: `${label}/${container}/in/*.txt`, to: `${label}/${container}/out/`, dry_run: true },
    });
    assert.equal(dry.statusCode, 200, dry.body);
    const plan = dry.json();
    assert.equal(plan.kind, 'move');
    assert.deepEqual(plan.counts, { move: 3 });
    assert.deepEqual(
      plan.entries.map((e: { from: string; to: string }) => [e.from, e.to]).sort(),
      ['x', 'y', 'z'].map((n) => [`${label}/${container}/in/${n}.txt`, `${label}/${container}/out/${n}.txt`]),
    );
    assert.equal(String(await readAzure(azure, container, 'in/x.txt')), 'x', 'the dry run moved nothing');

    // Changed: azure's listing reports no ETag, so the plan binds its size (and the stat checks it).
    await upload('in/y.txt', 'YYY');
    await box.getBlockBlobClient('in/z.txt').delete(); // gone
    await upload('in/w.txt', 'w'); // new
    const run = await call({ method: 'POST', url: `/v1/plans/${plan.plan_id}/run` });
    assert.equal(run.statusCode, 202, run.body);
    const done = await waitFor(call, `/v1/transfers/${run.json().id}`);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.deepEqual(done.counts, {
      total: 4,
      pending: 0,
      succeeded: 1,
      skipped: 3,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(String(await readAzure(azure, container, 'out/x.txt')), 'x');
    assert.equal(await readAzure(azure, container, 'in/x.txt'), undefined);
    assert.equal(String(await readAzure(azure, container, 'in/y.txt')), 'YYY', 'changed: left alone');
    assert.equal(await readAzure(azure, container, 'out/y.txt'), undefined);
    assert.equal(String(await readAzure(azure, container, 'in/w.txt')), 'w', 'new: left alone');
    const reported = await failures(call, `/v1/transfers/${done.id}/failures`);
    assert.equal(reported.length, 3, reported.join('\n'));
    assert.equal(reported[0], `${container}/in/w.txt: not in the plan (skipped)`);
    assert.equal(reported[1], `${container}/in/y.txt: changed since the plan: size 2 → 3 (skipped)`);
    assert.equal(reported[2], `${container}/in/z.txt: changed since the plan: gone (skipped)`);
  });

  test('plans page their entries, are 404 for another workspace, and refuse bad dry runs', async () => {
    const { call, label } = await s3Location();
    const objects: Record<string, string> = {};
    for (let i = 0; i < 130; i++) objects[`p/${String(i).padStart(3, '0')}.txt`] = String(i);
    const bucket = await seedBucket(client, objects);
    const dest = await seedBucket(client, {});
    const dry = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${label}:${bucket}/p/`, to: `${label}:${dest}/q/`, dry_run: true },
    });
    assert.equal(dry.statusCode, 200, dry.body);
    const plan = dry.json();
    assert.equal(plan.total, 130);
    assert.equal(plan.entries.length, 100, 'the first page');
    assert.ok(plan.next_cursor);
    const keys: string[] = plan.entries.map((e: { key: string }) => e.key);
    let cursor: string | undefined = plan.next_cursor;
    while (cursor !== undefined) {
      const res = await call({ method: 'GET', url: `/v1/plans/${plan.plan_id}?limit=7&cursor=${cursor}` });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.json().entries.length <= 7);
      keys.push(...res.json().entries.map((e: { key: string }) => e.key));
      cursor = res.json().next_cursor;
    }
    assert.deepEqual(
      keys.sort(),
      Object.keys(objects)
        .map((k) => k.slice(2))
        .sort(),
    );

    const other = await newWorkspace(t);
    assert.equal((await other({ method: 'GET', url: `/v1/plans/${plan.plan_id}` })).statusCode, 404);
    assert.equal((await other({ method: 'POST', url: `/v1/plans/${plan.plan_id}/run` })).statusCode, 404);
    assert.equal((await call({ method: 'GET', url: '/v1/plans/not-a-plan' })).statusCode, 404);

    const single = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${label}:${bucket}/p/000.txt`, to: `${label}:${dest}/x.txt`, dry_run: true },
    });
    assert.equal(single.statusCode, 400);
    assert.match(single.json().message, /bulk/);
    const manifest = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: {
        from: `${label}:${bucket}/p/`,
        to: `${label}:${dest}/q/`,
        manifest: ['000.txt'],
        dry_run: true,
      },
    });
    assert.equal(manifest.statusCode, 400);
    assert.match(manifest.json().message, /manifest/);
  });

  test('a plan holds at most its limit of entries, and a refused dry run leaves nothing behind', async () => {
    const { label } = await s3Location();
    const bucket = await seedBucket(client, { 'l/1': '1', 'l/2': '2', 'l/3': '3' });
    const s = t.services;
    const plans = new Plans(s.db, s.locations, s.storage, s.copies, s.operations, s.rateLimits, s.clock, {
      maxEntries: 2,
    });
    const { workspace_id } = await s.db.kysely
      .selectFrom('locations')
      .select('workspace_id')
      .where('label', '=', label)
      .executeTakeFirstOrThrow();
    const ws = wholeWorkspace(workspace_id);
    const audit = { workspaceId: workspace_id, keyId: null, ip: '127.0.0.1', userAgent: undefined };
    const before = await s.db.kysely.selectFrom('plans').select('id').execute();
    await assert.rejects(
      plans.remove(ws, { path: `${label}/${bucket}/l/*` }, 100, audit),
      /more than 2 objects/,
    );
    const afterRows = await s.db.kysely.selectFrom('plans').select('id').execute();
    assert.equal(afterRows.length, before.length, 'no plan left');
    const plan = await plans.remove(ws, { path: `${label}/${bucket}/l/[12]` }, 100, audit);
    assert.equal(plan.total, 2, 'at the limit: fine');
    // Its time is bounded too: a listing that takes longer is stopped, and leaves nothing.
    const hasty = new Plans(s.db, s.locations, s.storage, s.copies, s.operations, s.rateLimits, s.clock, {
      maxMs: 1,
    });
    const plansBefore = await s.db.kysely.selectFrom('plans').select('id').execute();
    await assert.rejects(
      hasty.remove(ws, { path: `${label}/${bucket}/l/*` }, 100, audit),
      /took longer than/,
    );
    assert.equal((await s.db.kysely.selectFrom('plans').select('id').execute()).length, plansBefore.length);
  });

  test('a plan expires after an hour (410), and retention prunes it', async () => {
    const { call, label } = await s3Location();
    const bucket = await seedBucket(client, { 'e/a': 'a' });
    const dry = await call({
      method: 'POST',
      url: '/remove',
      payload: { path: `${label}/${bucket}/e/*`, dry_run: true },
    });
    assert.equal(dry.statusCode, 200, dry.body);
    const id = dry.json().plan_id;
    clock.advance(PLAN_TTL_MS + 1000);
    const run = await call({ method: 'POST', url: `/v1/plans/${id}/run` });
    assert.equal(run.statusCode, 410, run.body);
    assert.match(run.json().message, /expired/);
    assert.equal(String(await readS3(client, bucket, 'e/a')), 'a');
    assert.equal((await call({ method: 'GET', url: `/v1/plans/${id}` })).statusCode, 200, 'still readable');
    const q = t.services.db.kysely;
    // A plan whose run is still planning from it stays, however old.
    const held = await call({
      method: 'POST',
      url: '/remove',
      payload: { path: `${label}/${bucket}/e/*`, dry_run: true },
    });
    const heldId = held.json().plan_id;
    const ws = await q
      .selectFrom('plans')
      .select('workspace_id')
      .where('id', '=', heldId)
      .executeTakeFirstOrThrow();
    const now = clock.now();
    await q
      .insertInto('jobs')
      .values({
        id: newId(),
        workspace_id: ws.workspace_id,
        location_ids: ',',
        status: 'running',
        source: JSON.stringify({ location_id: newId(), path: 'b/' }),
        destination: JSON.stringify({ location_id: newId(), path: 'b/' }),
        overwrite: 'always',
        plan_id: heldId,
        error: null,
        // Leased far ahead, so that no worker of this app plans it meanwhile.
        lease_owner: 'elsewhere',
        lease_expires_at: now + 10 * PLAN_TTL_MS,
        created_at: now,
        updated_at: now,
        started_at: now,
        finished_at: null,
      })
      .execute();
    clock.advance(PLAN_TTL_MS + 1000);
    const pruner = new Pruner(
      {
        db: t.services.db,
        clock,
        logger: t.services.logger,
        owner: unique('pruner'),
        registry: new Registry(),
      },
      { retentionMs: 30 * 86_400_000 },
    );
    const pruned = await pruner.runDue();
    assert.ok((pruned?.plans ?? 0) >= 2, `the plan and its entry: ${JSON.stringify(pruned)}`);
    assert.equal((await call({ method: 'GET', url: `/v1/plans/${id}` })).statusCode, 404);
    assert.equal(
      (await call({ method: 'GET', url: `/v1/plans/${heldId}` })).statusCode,
      200,
      'still planned from',
    );
    const entries = await q.selectFrom('plan_entries').select('seq').where('plan_id', '=', id).execute();
    assert.deepEqual(entries, []);
  });
});
