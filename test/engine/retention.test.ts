// Retention (docs/api.md, "Retention"): the pruner deletes finished work older than
// FERRY_RETENTION_DAYS, in batches, children before parents, one process at a time, and a pruned
// transfer answers as an unknown id does; an expired share link keeps answering 410.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { startBackground } from '../../src/background.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { Pruner, type PrunerOptions } from '../../src/domain/retention/pruner.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { newId } from '../../src/ids.js';
import * as jobs from '../../src/lifecycle/jobs.js';
import type { JobStatus, SendStatus, TransferStatus, WebhookMessageStatus } from '../../src/states.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

test('FERRY_RETENTION_DAYS: 30 days by default, 0 or "never" keeps forever, anything else but whole days is refused', () => {
  assert.equal(loadConfig({}).retentionDays, 30);
  assert.equal(loadConfig({ FERRY_RETENTION_DAYS: '7' }).retentionDays, 7);
  assert.equal(loadConfig({ FERRY_RETENTION_DAYS: '0' }).retentionDays, undefined);
  assert.equal(loadConfig({ FERRY_RETENTION_DAYS: 'never' }).retentionDays, undefined);
  assert.equal(loadConfig({ FERRY_RETENTION_DAYS: 'Never' }).retentionDays, undefined);
  for (const bad of ['-1', '1.5', 'forever', '30d', '36501']) {
    assert.throws(() => loadConfig({ FERRY_RETENTION_DAYS: bad }), ConfigError, bad);
  }
});

await eachDatabase('retention', (database) => {
  const clock = new ManualClock();
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database, { clock });
  });
  after(() => t.close());

  const db = () => t.services.db.kysely;

  function pruner(options: Partial<PrunerOptions> = {}, registry = new Registry()): Pruner {
    return new Pruner(
      { db: t.services.db, clock, logger: t.services.logger, owner: unique('pruner'), registry },
      { retentionMs: 30 * DAY, ...options },
    );
  }

  /** A location row of `ws` for the rows under test to name (its secret is never read). */
  async function insertLocation(ws: string, now: number): Promise<string> {
    const location = newId();
    await db()
      .insertInto('locations')
      .values({
        id: location,
        workspace_id: ws,
        provider: 's3',
        label: unique('loc'),
        metadata: null,
        secret_envelope: 'unused',
        status: 'active',
        validation_error: null,
        access_token_expires_at: null,
        last_refresh_attempt_at: null,
        failure_reason: null,
        last_refresh_error: null,
        refresh_lease_owner: null,
        refresh_lease_expires_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    return location;
  }

  /** Each test starts past the previous run's next one (hourly), with its own workspace. */
  async function fresh(): Promise<{ ws: string; location: string }> {
    clock.advance(2 * HOUR);
    const ws = (await ensureWorkspace(db(), unique('ws'), clock)).id;
    const now = clock.now();
    const location = await insertLocation(ws, now);
    return { ws, location };
  }

  async function transfer(ws: string, status: TransferStatus, finishedAt: number | null, at = clock.now()) {
    const id = newId();
    await db()
      .insertInto('transfers')
      .values({
        id,
        workspace_id: ws,
        location_ids: ',',
        kind: 'remove',
        status,
        spec: JSON.stringify({ kind: 'remove', paths: [{ location_id: newId(), path: 'b/x' }] }),
        given_from: JSON.stringify('x:b/x'),
        given_to: null,
        bytes_total: null,
        error: null,
        lease_owner: null,
        lease_expires_at: null,
        created_at: at,
        updated_at: finishedAt ?? at,
        started_at: at,
        finished_at: finishedAt,
      })
      .execute();
    return id;
  }

  async function job(
    ws: string,
    status: JobStatus,
    finishedAt: number | null,
    objects: number,
    transferId?: string,
  ): Promise<string> {
    const id = newId();
    const at = finishedAt ?? clock.now();
    await db()
      .insertInto('jobs')
      .values({
        id,
        workspace_id: ws,
        location_ids: ',',
        status,
        source: JSON.stringify({ location_id: newId(), path: 'b/in/' }),
        destination: JSON.stringify({ location_id: newId(), path: 'b/out/' }),
        overwrite: 'always',
        has_manifest: 1,
        ...(transferId === undefined ? {} : { transfer_id: transferId }),
        error: null,
        lease_owner: null,
        lease_expires_at: null,
        created_at: at,
        updated_at: at,
        started_at: at,
        finished_at: finishedAt,
      })
      .execute();
    await db().insertInto('job_manifests').values({ job_id: id, keys: '[]' }).execute();
    for (let seq = 0; seq < objects; seq += 200) {
      const rows = Array.from({ length: Math.min(200, objects - seq) }, (_, i) => ({
        job_id: id,
        seq: seq + i,
        key: `k${seq + i}`,
        key_hash: `h${seq + i}`,
        status: 'succeeded' as const,
        size: 1,
        source_etag: null,
        error: null,
        last_attempt_at: null,
        lease_owner: null,
        lease_expires_at: null,
      }));
      await db().insertInto('job_objects').values(rows).execute();
    }
    return id;
  }

  async function send(ws: string, location: string, status: SendStatus, updatedAt: number): Promise<string> {
    const id = newId();
    await db()
      .insertInto('sends')
      .values({
        id,
        workspace_id: ws,
        sender_name: null,
        location_id: location,
        path: 'b/x',
        file_name: 'x',
        file_size: 1,
        recipients: JSON.stringify({ to: ['a@example.com'], cc: [], bcc: [], replyTo: [] }),
        recipient_count: 1,
        message: null,
        password_hash: null,
        link_expires_at: null,
        status,
        scheduled_at: null,
        sent_at: status === 'sent' ? updatedAt : null,
        error: null,
        refused: null,
        run_after: updatedAt,
        lease_owner: null,
        lease_expires_at: null,
        created_at: updatedAt,
        updated_at: updatedAt,
      })
      .execute();
    return id;
  }

  async function webhook(ws: string): Promise<string> {
    const id = newId();
    await db()
      .insertInto('webhooks')
      .values({
        id,
        workspace_id: ws,
        url: 'https://example.com/hook',
        events: ',transfer.complete,',
        secret_envelope: 'unused',
        status: 'enabled',
        disabled_reason: null,
        disabled_at: null,
        failing_since: null,
        created_at: clock.now(),
        updated_at: clock.now(),
      })
      .execute();
    return id;
  }

  async function message(hook: string, status: WebhookMessageStatus, updatedAt: number, attempts: number) {
    const event = newId();
    await db()
      .insertInto('webhook_messages')
      .values({
        webhook_id: hook,
        event_id: event,
        type: 'transfer.complete',
        payload: '{}',
        status,
        run_after: status === 'pending' ? clock.now() + DAY : updatedAt,
        lease_owner: null,
        lease_expires_at: null,
        created_at: updatedAt,
        updated_at: updatedAt,
      })
      .execute();
    for (let attempt = 1; attempt <= attempts; attempt++) {
      await db()
        .insertInto('webhook_attempts')
        .values({
          id: newId(),
          webhook_id: hook,
          event_id: event,
          type: 'transfer.complete',
          attempt,
          status_code: 500,
          error: null,
          duration_ms: 1,
          created_at: updatedAt,
        })
        .execute();
    }
    return event;
  }

  async function share(
    ws: string,
    location: string,
    fields: { revoked_at?: number; expires_at?: number; max_downloads?: number; downloads?: number },
  ): Promise<{ id: string; token: string }> {
    const id = newId();
    const token = randomBytes(32).toString('base64url');
    await db()
      .insertInto('shares')
      .values({
        id,
        workspace_id: ws,
        location_id: location,
        path: 'b/x',
        source: 'loc/b/x',
        token_hash: createHash('sha256').update(token).digest('hex'),
        password_hash: null,
        expires_at: fields.expires_at ?? null,
        max_downloads: fields.max_downloads ?? null,
        downloads: fields.downloads ?? 0,
        last_download_at: null,
        revoked_at: fields.revoked_at ?? null,
        created_at: clock.now() - 90 * DAY,
      })
      .execute();
    await db()
      .insertInto('share_downloads')
      .values({ share_id: id, client: '192.0.2.1', at: clock.now() - 60 * DAY })
      .execute();
    return { id, token };
  }

  async function ids(table: 'transfers' | 'jobs' | 'sends' | 'shares', ws: string): Promise<string[]> {
    const rows = await db().selectFrom(table).select('id').where('workspace_id', '=', ws).execute();
    return rows.map((r) => r.id).sort();
  }

  async function count(
    table: 'job_objects' | 'job_manifests' | 'webhook_messages' | 'webhook_attempts' | 'share_downloads',
    column: 'job_id' | 'webhook_id' | 'share_id',
    values: string[],
  ): Promise<number> {
    const result = await sql<{ n: number | string }>`
      select count(*) as n from ${sql.table(table)} where ${sql.ref(column)} in (${sql.join(values)})`.execute(
      db(),
    );
    const row = result.rows[0];
    assert.ok(row);
    return Number(row.n);
  }

  test('finished rows older than the cutoff go with their children; newer, unfinished, expired and used-up ones stay', async () => {
    const { ws, location } = await fresh();
    const now = clock.now();
    const old = now - 31 * DAY;
    const recent = now - 29 * DAY;
    await transfer(ws, 'complete', old);
    await transfer(ws, 'failed', old);
    const keptTransfers = [
      await transfer(ws, 'complete', recent),
      await transfer(ws, 'running', null, old),
      await transfer(ws, 'queued', null, old),
    ];
    // A transfer over several objects goes with its job.
    const jobTransfer = await transfer(ws, 'failed', old);
    const goneJobs = [
      await job(ws, 'complete', old, 3),
      await job(ws, 'canceled', old, 2),
      await job(ws, 'failed', old, 4, jobTransfer),
    ];
    const keptJobs = [await job(ws, 'running', null, 5), await job(ws, 'partial', recent, 2)];
    for (const status of ['sent', 'failed', 'canceled'] as const) await send(ws, location, status, old);
    const keptSends = [await send(ws, location, 'scheduled', old), await send(ws, location, 'sent', recent)];
    const hook = await webhook(ws);
    await message(hook, 'delivered', old, 2);
    await message(hook, 'failed', old, 3);
    const pending = await message(hook, 'pending', old, 1);
    const fresher = await message(hook, 'delivered', recent, 1);
    const revoked = await share(ws, location, { revoked_at: old });
    const kept = [
      await share(ws, location, { revoked_at: recent }),
      await share(ws, location, { expires_at: old }),
      await share(ws, location, { max_downloads: 1, downloads: 1 }),
    ];

    const registry = new Registry();
    const pruned = await pruner({}, registry).runDue();
    assert.ok(pruned, 'the first pruner claims the task');

    assert.deepEqual(await ids('transfers', ws), [...keptTransfers].sort());
    assert.deepEqual(await ids('jobs', ws), [...keptJobs].sort());
    assert.equal(await count('job_objects', 'job_id', goneJobs), 0, 'no orphan objects');
    assert.equal(await count('job_manifests', 'job_id', goneJobs), 0, 'no orphan manifests');
    assert.equal(await count('job_objects', 'job_id', keptJobs), 7);
    assert.deepEqual(await ids('sends', ws), [...keptSends].sort());
    const messages = await db()
      .selectFrom('webhook_messages')
      .select('event_id')
      .where('webhook_id', '=', hook)
      .execute();
    assert.deepEqual(messages.map((m) => m.event_id).sort(), [pending, fresher].sort());
    const attempts = await db()
      .selectFrom('webhook_attempts')
      .select('event_id')
      .where('webhook_id', '=', hook)
      .execute();
    assert.deepEqual(attempts.map((a) => a.event_id).sort(), [pending, fresher].sort(), 'no orphan attempts');
    assert.deepEqual(await ids('shares', ws), kept.map((s) => s.id).sort());
    assert.equal(await count('share_downloads', 'share_id', [revoked.id]), 0, 'no orphan download records');

    // Other tests' workspaces hold no old rows, so the counts are this test's.
    assert.deepEqual(pruned, {
      transfers: 3,
      jobs: 3,
      job_objects: 9,
      sends: 3,
      webhook_messages: 2,
      webhook_attempts: 5,
      shares: 1,
      plans: 0,
      audit_events: 0,
    });
    const metric = await registry.getSingleMetric('ferry_retention_pruned_total')?.get();
    const byTable = Object.fromEntries((metric?.values ?? []).map((v) => [v.labels.table, v.value]));
    assert.equal(byTable.job_objects, 9);
    assert.equal(byTable.transfers, 3);
    assert.ok(
      t.logs.lines.some(
        (line) => line.includes('retention: pruned finished work') && line.includes('"job_objects":9'),
      ),
      'one log line with the counts',
    );
  });

  test('a batch deletes at most its size: a job with more objects than a batch loses them over several, and goes last', async () => {
    const { ws } = await fresh();
    const old = clock.now() - 40 * DAY;
    const big = await job(ws, 'complete', old, 25);
    const small = await job(ws, 'complete', old, 3);
    const first = await t.services.db.kysely
      .transaction()
      .execute((trx) => jobs.prune(trx, t.services.db.dialect, clock.now() - 30 * DAY, 10));
    assert.deepEqual(first, { jobs: 0, objects: 10 }, 'ten objects, and no job while it has objects left');
    assert.deepEqual((await ids('jobs', ws)).sort(), [big, small].sort());

    const transfers = await Promise.all(Array.from({ length: 23 }, () => transfer(ws, 'complete', old)));
    const pruned = await pruner({ batch: 10 }).runDue();
    assert.ok(pruned);
    assert.equal(pruned.job_objects, 18);
    assert.equal(pruned.jobs, 2);
    assert.equal(pruned.transfers, transfers.length);
    assert.deepEqual(await ids('jobs', ws), []);
    assert.deepEqual(await ids('transfers', ws), []);
    assert.equal(await count('job_objects', 'job_id', [big, small]), 0);
  });

  test('two pruners at once: one claims the task and prunes, the other does nothing; the next run is an hour on', async () => {
    const { ws } = await fresh();
    const old = clock.now() - 40 * DAY;
    await job(ws, 'complete', old, 300);
    const a = pruner({ batch: 50 });
    const b = pruner({ batch: 50 });
    const [ra, rb] = await Promise.all([a.runDue(), b.runDue()]);
    assert.equal([ra, rb].filter((r) => r !== undefined).length, 1, 'exactly one ran');
    assert.equal((ra ?? rb)?.job_objects, 300);
    await transfer(ws, 'complete', old);
    assert.equal(await a.runDue(), undefined, 'not due again yet');
    assert.equal(await b.runDue(), undefined, 'not due again yet');
    clock.advance(HOUR);
    const later = await b.runDue();
    assert.equal(later?.transfers, 1);
  });

  test('a pruner stopped mid-run ends after its batch and leaves the task due, so the next run goes on at once', async () => {
    const { ws } = await fresh();
    const big = await job(ws, 'complete', clock.now() - 40 * DAY, 30);
    const stopped = pruner({ batch: 10 });
    await stopped.stop();
    assert.equal(await stopped.runDue(), undefined, 'a stopped run answers nothing');
    assert.equal(await count('job_objects', 'job_id', [big]), 20, 'one batch went');
    assert.ok(t.logs.lines.some((line) => line.includes('stopped before the end')));
    const next = await pruner({ batch: 10 }).runDue();
    assert.equal(next?.job_objects, 20, 'due at once, without waiting for the hour');
    assert.equal(next?.jobs, 1);
  });

  test('a pruned transfer and job answer 404 like an unknown id; an expired share link still answers 410', async () => {
    await fresh();
    const ws = (
      await db().selectFrom('workspaces').select('id').where('name', '=', 'default').executeTakeFirstOrThrow()
    ).id;
    const now = clock.now();
    const location = await insertLocation(ws, now);
    const old = now - 31 * DAY;
    const id = await transfer(ws, 'complete', old);
    const jobId = await job(ws, 'partial', old, 2);
    const expired = await share(ws, location, { expires_at: old });
    const before = await t.request({ method: 'GET', url: `/v1/transfers/${id}` });
    assert.equal(before.statusCode, 200, before.body);
    assert.equal((await t.request({ method: 'GET', url: `/v1/jobs/${jobId}` })).statusCode, 200);
    assert.equal((await t.request({ method: 'GET', url: `/s/${expired.token}` })).statusCode, 410);

    assert.ok(await pruner().runDue());

    const gone = await t.request({ method: 'GET', url: `/v1/transfers/${id}` });
    const unknown = await t.request({ method: 'GET', url: `/v1/transfers/${newId()}` });
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.statusCode, unknown.statusCode);
    assert.equal((await t.request({ method: 'GET', url: `/v1/jobs/${jobId}` })).statusCode, 404);
    const link = await t.request({ method: 'GET', url: `/s/${expired.token}` });
    assert.equal(link.statusCode, 410, 'an expired link is kept, so it answers as docs/api.md says');
  });
});

await eachDatabase('retention kept forever', (database) => {
  const clock = new ManualClock();
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database, {
      clock,
      env: { FERRY_RETENTION_DAYS: 'never', FERRY_AUDIT_RETENTION_DAYS: 'never' },
    });
  });
  after(() => t.close());

  test('FERRY_RETENTION_DAYS=never and FERRY_AUDIT_RETENTION_DAYS=never: the worker processes start no pruner, and no run is ever scheduled', async () => {
    const background = startBackground(t.services, { worker: { pollMs: 50 } });
    try {
      assert.equal(background.pruner, undefined);
    } finally {
      await background.stop(1000);
    }
    const tasks = await t.services.db.kysely.selectFrom('periodic_tasks').selectAll().execute();
    assert.deepEqual(tasks, []);
  });
});
