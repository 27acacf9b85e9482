// docs/api.md "Undo" through HTTP on both databases, with a worker in the process and s3rver behind the
// locations: backup_to keeps what a remove, sync, move or bulk copy deletes or overwrites (same bytes,
// under <prefix>/<job id>/), a failing backup deletes nothing, and POST /v1/jobs/{id}/undo puts the
// destination back, leaving alone (and reporting) what changed since.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
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

await eachDatabase('undo', (database) => {
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

  async function setup(): Promise<{ call: Call; loc: string; label: string }> {
    const call = await newWorkspace(t);
    const created = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKIDUNDO', secret_access_key: 'undo-secret' },
      metadata: { endpoint: s3.endpoint },
    });
    return { call, loc: created.id, label: created.label };
  }

  const post = (call: Call, url: string, payload?: Record<string, unknown>) =>
    call({ method: 'POST', url, ...(payload === undefined ? {} : { payload }) });

  async function job(call: Call, url: string, payload: Record<string, unknown>) {
    const res = await post(call, url, payload);
    assert.equal(res.statusCode, 202, res.body);
    return waitFor(call, `/v1/jobs/${res.json().job_id}`);
  }

  async function transfer(call: Call, url: string, payload: Record<string, unknown>) {
    const res = await post(call, url, payload);
    assert.equal(res.statusCode, 202, res.body);
    return waitFor(call, `/v1/transfers/${res.json().id}`);
  }

  async function undo(call: Call, id: string) {
    const res = await post(call, `/v1/jobs/${id}/undo`);
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().status, 'planning');
    return waitFor(call, `/v1/jobs/${res.json().job_id}`);
  }

  const text = async (bucket: string, key: string) => (await readS3(client, bucket, key))?.toString();

  async function report(call: Call, jobId: string): Promise<Array<Record<string, unknown>>> {
    const res = await call({ method: 'GET', url: `/v1/jobs/${jobId}/report` });
    assert.equal(res.statusCode, 200, res.body);
    return res.body
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l));
  }

  test('a remove with backup_to keeps each object, same bytes, under <prefix>/<transfer id>/ before removing it', async () => {
    const { call, loc } = await setup();
    const big = randomBytes(300_000);
    const bucket = await seedBucket(client, { 'tmp/a.txt': 'A', 'tmp/deep/b.bin': big, 'keep.txt': 'K' });
    const backups = await seedBucket(client, {});
    const done = await transfer(call, '/remove', {
      path: `${loc}/${bucket}/tmp/**`,
      backup_to: `${loc}:${backups}/kept`,
    });
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.equal(await readS3(client, bucket, 'tmp/a.txt'), undefined);
    assert.equal(await readS3(client, bucket, 'tmp/deep/b.bin'), undefined);
    assert.equal(await text(bucket, 'keep.txt'), 'K');
    assert.equal(await text(backups, `kept/${done.id}/a.txt`), 'A');
    assert.deepEqual(await readS3(client, backups, `kept/${done.id}/deep/b.bin`), big);
  });

  test('a remove whose backup fails removes nothing, and says why', async () => {
    const { call, loc } = await setup();
    const bucket = await seedBucket(client, { 'tmp/a.txt': 'A', 'tmp/b.txt': 'B' });
    const done = await transfer(call, '/remove', {
      path: `${loc}/${bucket}/tmp/*.txt`,
      backup_to: `${loc}:no-such-bucket-${bucket}/kept/`,
    });
    assert.equal(done.status, 'failed', JSON.stringify(done));
    assert.equal(await text(bucket, 'tmp/a.txt'), 'A');
    assert.equal(await text(bucket, 'tmp/b.txt'), 'B');
    const failures = await call({ method: 'GET', url: `/v1/transfers/${done.id}/failures` });
    const listed = failures.json().failures as Array<{ key: string; error: string }>;
    assert.equal(listed.length, 2);
    for (const f of listed) assert.match(f.error, /backup of .* failed/);
  });

  test('a sync whose backup fails neither overwrites nor deletes: the objects fail with the reason', async () => {
    const { call, loc } = await setup();
    const src = await seedBucket(client, { 'p/a.txt': 'new, longer A' });
    const dst = await seedBucket(client, { 'q/a.txt': 'old A', 'q/gone.txt': 'G' });
    const overwriting = await job(call, '/v1/sync', {
      from: `${loc}:${src}/p/`,
      to: `${loc}:${dst}/q/`,
      backup_to: `${loc}:no-such-bucket-${dst}/kept/`,
    });
    assert.equal(overwriting.status, 'failed', JSON.stringify(overwriting));
    assert.equal(await text(dst, 'q/a.txt'), 'old A', 'not overwritten without its backup');
    // Only deletions: the copy is equal, the deletion's backup fails, and it deletes nothing.
    await client.send(new PutObjectCommand({ Bucket: src, Key: 'p/a.txt', Body: 'old A' }));
    const deleting = await job(call, '/v1/sync', {
      from: `${loc}:${src}/p/`,
      to: `${loc}:${dst}/q/`,
      compare: 'size',
      delete: true,
      max_delete: 1,
      backup_to: `${loc}:no-such-bucket-${dst}/kept/`,
    });
    assert.notEqual(deleting.status, 'complete', JSON.stringify(deleting));
    assert.equal(await text(dst, 'q/gone.txt'), 'G', 'not deleted without its backup');
    const failures = await call({ method: 'GET', url: `/v1/jobs/${deleting.job_id}/failures` });
    const listed = failures.json().failures as Array<{ key: string; error: string }>;
    assert.deepEqual(
      listed.map((f) => f.key),
      ['gone.txt'],
    );
    assert.match(listed[0]?.error ?? '', /backup of .*gone\.txt .* failed/);
  });

  test('a sync with backup_to keeps what it overwrites and deletes; its undo puts the destination back and leaves a changed object alone', async () => {
    const { call, loc } = await setup();
    const src = await seedBucket(client, {
      'p/new.txt': 'NEW',
      'p/changed.txt': 'CHANGED-TWO',
      'p/later.txt': 'L-two',
    });
    const dst = await seedBucket(client, {
      'q/changed.txt': 'changed-1',
      'q/later.txt': 'l1',
      'q/gone.txt': 'GONE',
      'q/gone2.txt': 'GONE2',
    });
    const backups = await seedBucket(client, {});
    const synced = await job(call, '/v1/sync', {
      from: `${loc}:${src}/p/`,
      to: `${loc}:${dst}/q/`,
      compare: 'size',
      delete: true,
      max_delete: 2,
      backup_to: `${loc}:${backups}/bk/`,
    });
    assert.equal(synced.status, 'complete', JSON.stringify(synced));
    assert.equal(synced.backup_to, `${loc}:${backups}/bk/`);
    const id = String(synced.job_id);
    // Overwritten and deleted objects are kept, with their bytes; a created one had nothing to keep.
    assert.equal(await text(backups, `bk/${id}/changed.txt`), 'changed-1');
    assert.equal(await text(backups, `bk/${id}/later.txt`), 'l1');
    assert.equal(await text(backups, `bk/${id}/gone.txt`), 'GONE');
    assert.equal(await text(backups, `bk/${id}/gone2.txt`), 'GONE2');
    assert.equal(await readS3(client, backups, `bk/${id}/new.txt`), undefined);
    assert.equal(await text(dst, 'q/changed.txt'), 'CHANGED-TWO');
    assert.equal(await readS3(client, dst, 'q/gone.txt'), undefined);

    // Someone changes one object after the sync: the undo must leave it alone and say so.
    await client.send(new PutObjectCommand({ Bucket: dst, Key: 'q/later.txt', Body: 'edited since' }));

    const undone = await undo(call, id);
    assert.equal(undone.kind, 'undo');
    assert.equal(undone.undo_of, id);
    assert.equal(undone.status, 'complete', JSON.stringify(undone));
    assert.equal(await readS3(client, dst, 'q/new.txt'), undefined, 'created: removed');
    assert.equal(await text(dst, 'q/changed.txt'), 'changed-1', 'overwritten: restored');
    assert.equal(await text(dst, 'q/gone.txt'), 'GONE', 'deleted: restored');
    assert.equal(await text(dst, 'q/gone2.txt'), 'GONE2', 'deleted: restored');
    assert.equal(await text(dst, 'q/later.txt'), 'edited since', 'changed since: left alone');
    const lines = await report(call, String(undone.job_id));
    const byKey = Object.fromEntries(lines.map((l) => [l.key, l]));
    assert.equal(byKey['new.txt']?.outcome, 'removed');
    assert.equal(byKey['changed.txt']?.outcome, 'restored');
    assert.equal(byKey['gone.txt']?.outcome, 'restored');
    assert.equal(byKey['later.txt']?.outcome, 'skipped');
    assert.match(String(byKey['later.txt']?.reason), /^changed since the job/);
    assert.deepEqual(
      { ...(undone.counts as object) },
      { total: 5, pending: 0, succeeded: 4, skipped: 1, failed: 0, deleted: 0, size_only: 0 },
    );

    // Each step is safe to repeat (a worker that died mid-undo runs it again): a second undo finds
    // every object already back, changes nothing, and still leaves the changed one alone.
    const twice = await undo(call, id);
    assert.equal(twice.status, 'complete', JSON.stringify(twice));
    assert.equal((twice.counts as { skipped: number }).skipped, 1);
    assert.equal(await text(dst, 'q/changed.txt'), 'changed-1');
    assert.equal(await text(dst, 'q/gone.txt'), 'GONE');
    assert.equal(await readS3(client, dst, 'q/new.txt'), undefined);
    assert.equal(await text(dst, 'q/later.txt'), 'edited since');
  });

  test('without backup_to a sync that deleted answers 409 naming what cannot come back; one that only created is undone', async () => {
    const { call, loc } = await setup();
    const src = await seedBucket(client, { 'p/a.txt': 'A' });
    const dst = await seedBucket(client, { 'q/old.txt': 'OLD', 'q/old2.txt': 'OLD2', 'q/keep.txt': 'x' });
    const deleting = await job(call, '/v1/sync', {
      from: `${loc}:${src}/p/`,
      to: `${loc}:${dst}/q/`,
      delete: true,
      max_delete: 3,
    });
    assert.equal(deleting.status, 'complete', JSON.stringify(deleting));
    const refused = await post(call, `/v1/jobs/${deleting.job_id}/undo`);
    assert.equal(refused.statusCode, 409, refused.body);
    assert.match(refused.json().message, /cannot come back: .*old\.txt \(deleted without a backup\)/);
    assert.match(refused.json().message, /keep\.txt \(deleted without a backup\)/);
    assert.doesNotMatch(refused.json().message, /a\.txt/, 'what it created can come back');

    const dst2 = await seedBucket(client, {});
    const creating = await job(call, '/v1/sync', { from: `${loc}:${src}/p/`, to: `${loc}:${dst2}/q/` });
    assert.equal(creating.status, 'complete');
    assert.equal(await text(dst2, 'q/a.txt'), 'A');
    const undone = await undo(call, String(creating.job_id));
    assert.equal(undone.status, 'complete', JSON.stringify(undone));
    assert.equal(await readS3(client, dst2, 'q/a.txt'), undefined);
  });

  test('undo of a remove with backup puts every object back; a running job, an undo and an unknown id are refused', async () => {
    const { call, loc } = await setup();
    const bucket = await seedBucket(client, { 'in/a.txt': 'A', 'in/b.txt': 'B' });
    const backups = await seedBucket(client, {});
    const removed = await transfer(call, '/remove', {
      path: [`${loc}/${bucket}/in/a.txt`, `${loc}/${bucket}/in/b.txt`],
      backup_to: `${loc}:${backups}/bk`,
    });
    assert.equal(removed.status, 'complete', JSON.stringify(removed));
    assert.equal(removed.backup_to, `${loc}:${backups}/bk`, 'the transfer shows it as given');
    assert.deepEqual(
      { ...(removed.counts as object) },
      { total: 2, pending: 0, succeeded: 2, skipped: 0, failed: 0, deleted: 0, size_only: 0 },
    );
    assert.equal(await readS3(client, bucket, 'in/a.txt'), undefined);
    const undone = await undo(call, String(removed.id));
    assert.equal(undone.status, 'complete', JSON.stringify(undone));
    assert.equal(await text(bucket, 'in/a.txt'), 'A');
    assert.equal(await text(bucket, 'in/b.txt'), 'B');

    // Its scope: the job's own and remove (docs/api.md, "Scopes").
    const token = async (scopes: string[]) => {
      const res = await post(call, '/v1/tokens', { name: `k${scopes.join('')}`, scopes });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().token as string;
    };
    const withKey = (key: string, url: string) => t.request({ method: 'POST', url, token: key });
    const copied = await job(call, '/v1/copy', { from: `${loc}:${bucket}/in/`, to: `${loc}:${bucket}/c/` });
    const transferOnly = await withKey(await token(['read', 'transfer']), `/v1/jobs/${copied.job_id}/undo`);
    assert.equal(transferOnly.statusCode, 403, transferOnly.body);
    assert.match(transferOnly.json().message, /lacks the "remove" scope/);
    const removeOnly = await withKey(await token(['read', 'remove']), `/v1/jobs/${copied.job_id}/undo`);
    assert.equal(removeOnly.statusCode, 403, removeOnly.body);
    assert.match(removeOnly.json().message, /lacks the "transfer" scope/);

    const again = await post(call, `/v1/jobs/${undone.job_id}/undo`);
    assert.equal(again.statusCode, 409, again.body);
    const unknown = await post(call, '/v1/jobs/00000000-0000-4000-8000-000000000000/undo');
    assert.equal(unknown.statusCode, 404, unknown.body);
  });

  test('one undo of a job at a time: two at once give one job and a 409 naming it; once it has finished, another may run', async () => {
    const { call, loc } = await setup();
    const bucket = await seedBucket(client, { 'in/a.txt': 'A', 'in/b.txt': 'B' });
    const backups = await seedBucket(client, {});
    const copied = await job(call, '/v1/copy', {
      from: `${loc}:${bucket}/in/`,
      to: `${loc}:${bucket}/out/`,
      backup_to: `${loc}:${backups}/bk`,
    });
    assert.equal(copied.status, 'complete', JSON.stringify(copied));
    const both = await Promise.all([0, 1].map(() => post(call, `/v1/jobs/${copied.job_id}/undo`)));
    const started = both.filter((r) => r.statusCode === 202);
    const refused = both.filter((r) => r.statusCode === 409);
    assert.equal(started.length, 1, both.map((r) => r.body).join('\n'));
    assert.equal(refused.length, 1, both.map((r) => r.body).join('\n'));
    const undoId = String(started[0]?.json().job_id);
    assert.match(
      String(refused[0]?.json().message),
      new RegExp(
        `^job ${copied.job_id} (is being undone by job ${undoId} \\((planning|running)\\)|is being undone by another job, started at the same moment)$`,
      ),
    );
    const undone = await waitFor(call, `/v1/jobs/${undoId}`);
    assert.equal(undone.status, 'complete', JSON.stringify(undone));
    assert.equal(
      await readS3(client, bucket, 'out/a.txt'),
      undefined,
      'the undo removed what the copy created',
    );
    const again = await undo(call, String(copied.job_id));
    assert.equal(again.status, 'complete', JSON.stringify(again));
  });

  test('a bulk copy and a move with backup_to keep what they overwrite, and their undo restores it', async () => {
    const { call, loc } = await setup();
    const src = await seedBucket(client, { 'p/a.txt': 'A2', 'p/b.txt': 'B-new' });
    const dst = await seedBucket(client, { 'q/a.txt': 'A1' });
    const backups = await seedBucket(client, {});
    const copied = await job(call, '/v1/copy', {
      from: `${loc}:${src}/p/`,
      to: `${loc}:${dst}/q/`,
      backup_to: `${loc}:${backups}/bk/`,
    });
    assert.equal(copied.status, 'complete', JSON.stringify(copied));
    assert.equal(await text(backups, `bk/${copied.job_id}/a.txt`), 'A1');
    const undone = await undo(call, String(copied.job_id));
    assert.equal(undone.status, 'complete', JSON.stringify(undone));
    assert.equal(await text(dst, 'q/a.txt'), 'A1');
    assert.equal(await readS3(client, dst, 'q/b.txt'), undefined);

    const movedFrom = await seedBucket(client, { 'm/x.txt': 'X-new' });
    const movedTo = await seedBucket(client, { 'n/x.txt': 'X-old' });
    const moved = await transfer(call, '/move', {
      from: `${loc}/${movedFrom}/m/x.txt`,
      to: `${loc}/${movedTo}/n/`,
      backup_to: `${loc}:${backups}/mv`,
    });
    assert.equal(moved.status, 'complete', JSON.stringify(moved));
    assert.equal(await text(movedTo, 'n/x.txt'), 'X-new');
    assert.equal(await text(backups, `mv/${moved.id}/x.txt`), 'X-old');
    const back = await undo(call, String(moved.id));
    assert.equal(back.status, 'complete', JSON.stringify(back));
    assert.equal(await text(movedFrom, 'm/x.txt'), 'X-new', 'back at its source');
    assert.equal(await text(movedTo, 'n/x.txt'), 'X-old', 'what it replaced, back');
  });

  test("a schedule's sync with backup_to keeps what each run overwrites, under that run's job id", async () => {
    const { call, loc } = await setup();
    const src = await seedBucket(client, { 'p/a.txt': 'new, longer A' });
    const dst = await seedBucket(client, { 'q/a.txt': 'old A' });
    const backups = await seedBucket(client, {});
    const created = await post(call, '/v1/schedules', {
      name: 'nightly with backup',
      every: 'every day at 02:00',
      action: {
        sync: { from: `${loc}:${src}/p/`, to: `${loc}:${dst}/q/`, backup_to: `${loc}:${backups}/s/` },
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const ran = await post(call, `/v1/schedules/${created.json().id}/run`);
    assert.equal(ran.statusCode, 202, ran.body);
    const done = await waitFor(call, `/v1/jobs/${ran.json().job_id}`);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.equal(done.backup_to, `${loc}:${backups}/s/`);
    assert.equal(await text(backups, `s/${done.job_id}/a.txt`), 'old A');
  });

  test('backup_to is checked as a target: unknown location 404, inside the changed prefix 400, on a single copy 400, with dry_run 400', async () => {
    const { call, loc } = await setup();
    const bucket = await seedBucket(client, { 'p/a.txt': 'A' });
    const cases: Array<[string, Record<string, unknown>, number]> = [
      [
        '/v1/sync',
        { from: `${loc}:${bucket}/p/`, to: `${loc}:${bucket}/q/`, backup_to: 'nowhere:b/x/' },
        404,
      ],
      [
        '/v1/sync',
        { from: `${loc}:${bucket}/p/`, to: `${loc}:${bucket}/q/`, backup_to: `${loc}:${bucket}/q/bk/` },
        400,
      ],
      [
        '/v1/copy',
        { from: `${loc}:${bucket}/p/a.txt`, to: `${loc}:${bucket}/a.txt`, backup_to: `${loc}:${bucket}/bk/` },
        400,
      ],
      ['/remove', { path: `${loc}/${bucket}/p/**`, backup_to: `${loc}:${bucket}/p/bk` }, 400],
      ['/remove', { path: `${loc}/${bucket}/p/**`, backup_to: `${loc}:${bucket}/bk`, dry_run: true }, 400],
      ['/remove', { path: `${loc}/${bucket}/p/**`, backup_to: 'no colon' }, 400],
    ];
    for (const [url, payload, status] of cases) {
      const res = await post(call, url, payload);
      assert.equal(res.statusCode, status, `${url} ${JSON.stringify(payload)}: ${res.body}`);
    }
    assert.equal(await text(bucket, 'p/a.txt'), 'A');
  });
});
