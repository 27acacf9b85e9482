// Work that keeps crashing is ended, not retried forever (docs/api.md, "Background work that keeps
// failing"): a transfer, a job object or a send on which the worker crashes (an exception that is not a
// classified failure), or whose process died or froze while holding its lease, is failed with the
// reason after FERRY_WORK_MAX_CRASHES (3 here, the default) such claims, on both databases.
//
// How a crash is produced without mocking ferry's code: rows written straight to the database with
// content the runner cannot handle, as a bug or an older version could have written them (a spec that
// is not JSON, a path that is not a string, recipients that are not JSON), and, for a process that died,
// rows leased by a process that no longer exists, as a SIGKILL leaves them (test/engine/
// poison-restart.test.ts kills real processes).
//
// The app's clock is a SkippingClock: while a test waits for its work to end, the clock is moved over
// the waits the worker would otherwise sit out in real time (a crash's backoff, the 5 s between the
// maintenance rounds that fail work whose lease ran out), never while an attempt holds a live lease.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SendDispatcher } from '../../src/domain/sends/dispatcher.js';
import { newId } from '../../src/ids.js';
import { createMailer } from '../../src/mail/mailer.js';
import { Secret } from '../../src/secret.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { SkippingClock } from '../support/clock.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type Call, createLocation, newWorkspace } from '../support/transfers.js';
import { type WaitOptions, waitUntil } from '../support/wait.js';

const CRASHED_3 = /^the worker crashed 3 times on this work: /;
/** The worker's rounds of maintenance (src/engine/worker.ts), which fail work whose lease ran out. */
const MAINTENANCE_MS = 5000;

await eachDatabase('work that keeps crashing', (database) => {
  let t: TestApp;
  let location: { id: string; workspaceId: string };
  let call: Call;
  const clock = new SkippingClock();

  before(async () => {
    t = await startTestApp(database, { clock, worker: { leaseMs: 30_000 } });
    call = await newWorkspace(t);
    // Never contacted: every crash below happens before a store is asked anything.
    const { id } = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AK', secret_access_key: 'SK' },
      metadata: { endpoint: 'http://127.0.0.1:9' },
    });
    const row = await t.services.db.kysely
      .selectFrom('locations')
      .select('workspace_id')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    location = { id, workspaceId: row.workspace_id };
  });
  after(() => t.close());

  const db = () => t.services.db.kysely;

  async function insertTransfer(spec: string, extra: Record<string, unknown> = {}): Promise<string> {
    const id = newId();
    const now = Date.now();
    await db()
      .insertInto('transfers')
      .values({
        id,
        workspace_id: location.workspaceId,
        location_ids: ',',
        kind: 'remove',
        status: 'queued',
        spec,
        bytes_total: null,
        error: null,
        lease_owner: null,
        lease_expires_at: null,
        created_at: now,
        updated_at: now,
        started_at: null,
        finished_at: null,
        ...extra,
      })
      .execute();
    t.worker?.nudge();
    return id;
  }

  /**
   * Moves the clock over what the worker waits for, once no attempt runs: to the earliest retry time
   * of work waiting out a crash's backoff, else, when work is left running under a lease that ran out,
   * to the next round of maintenance. Nothing else is waited for (a live lease: an attempt runs).
   */
  async function skipWaits(): Promise<void> {
    const now = clock.now();
    const rows = [
      ...(await db()
        .selectFrom('transfers')
        .select(['status', 'run_after', 'lease_expires_at'])
        .where('status', 'in', ['queued', 'running'])
        .execute()),
      ...(await db()
        .selectFrom('job_objects')
        .select(['status', 'run_after', 'lease_expires_at'])
        .where('status', 'in', ['pending', 'running'])
        .execute()),
    ];
    const leased = rows.filter((r) => r.lease_expires_at !== null);
    if (leased.some((r) => Number(r.lease_expires_at) >= now)) return;
    const waiting = rows
      .filter((r) => r.status !== 'running' && Number(r.run_after) > now)
      .map((r) => Number(r.run_after));
    if (waiting.length > 0) clock.skipTo(Math.min(...waiting));
    else if (leased.length > 0) clock.skipTo(now + MAINTENANCE_MS);
    else return;
    t.worker?.nudge();
  }

  /** waitUntil, the clock moved over the worker's waits (skipWaits) between reads. */
  async function settle<T>(read: () => Promise<T | undefined>, options: WaitOptions) {
    return waitUntil(async () => {
      const value = await read();
      if (value === undefined) await skipWaits();
      return value;
    }, options);
  }

  async function settledTransfer(id: string) {
    return settle(
      async () => {
        const row = await db()
          .selectFrom('transfers')
          .selectAll()
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        return row.status === 'failed' || row.status === 'complete' ? row : undefined;
      },
      { what: `transfer ${id} to end`, detail: () => t.logs.text },
    );
  }

  test('a transfer whose spec is JSON of the wrong shape is tried again, then failed after 3 crashes with the reason', async () => {
    // A remove whose path is a number, as a bug or an older version could have written it: the spec's
    // codec (src/durable/work.ts) refuses it, a crash of this transfer like any unclassified exception.
    const id = await insertTransfer(
      JSON.stringify({ kind: 'remove', paths: [{ location_id: location.id, path: 7 }] }),
    );
    const row = await settledTransfer(id);
    assert.equal(row.status, 'failed');
    assert.equal(row.attempts, 3, 'tried three times, not once and not forever');
    assert.equal(row.crashes, 3);
    assert.match(row.error ?? '', CRASHED_3);
    assert.match(
      row.error ?? '',
      /internal error: transfers\.spec of row \S+ is not JSON this version of ferry reads: \/paths\/0\/path: /,
    );
    assert.doesNotMatch(row.error ?? '', /\n|\bat .*\.ts:\d+/, 'no stack');
    assert.equal(row.lease_owner, null);
    // The API shows the reason.
    const res = await call({ method: 'GET', url: `/v1/transfers/${id}` });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'failed');
    assert.equal(res.json().error, row.error);
  });

  test('a transfer the worker crashes on outside its attempt (a spec it cannot read) is failed after 3 crashes', async () => {
    const id = await insertTransfer('{"kind": "remove", "paths": [');
    const row = await settledTransfer(id);
    assert.equal(row.status, 'failed');
    assert.equal(row.attempts, 3);
    assert.match(row.error ?? '', CRASHED_3);
    assert.match(row.error ?? '', /JSON/);
  });

  test('a transfer whose lease ran out on its third crash (its process died holding it) is failed, not claimed again', async () => {
    const past = Date.now() - 1000;
    const dead = { status: 'running', lease_owner: 'gone:1:dead', lease_expires_at: past, attempts: 3 };
    const spec = JSON.stringify({ kind: 'remove', paths: [{ location_id: location.id, path: 'b/x' }] });
    const poisoned = await insertTransfer(spec, { ...dead, crashes: 3 });
    const row = await settledTransfer(poisoned);
    assert.equal(row.status, 'failed');
    assert.equal(row.attempts, 3, 'not claimed again');
    assert.equal(
      row.error,
      'the worker crashed 3 times on this work: its process stopped while running it (the lease ran out)',
    );
  });

  test('a job object the worker crashes on is failed after 3 crashes, counted on its job', async () => {
    const jobId = newId();
    const now = Date.now();
    await db()
      .insertInto('jobs')
      .values({
        id: jobId,
        workspace_id: location.workspaceId,
        location_ids: ',',
        status: 'running',
        // A plan the worker cannot read: every object of the job crashes it.
        source: '{"location_id":',
        destination: '{"location_id":',
        overwrite: 'always',
        has_manifest: 0,
        planning_done: 1,
        objects_total: 2,
        objects_pending: 2,
        error: null,
        lease_owner: null,
        lease_expires_at: null,
        created_at: now,
        updated_at: now,
        started_at: now,
        finished_at: null,
      })
      .execute();
    await db()
      .insertInto('job_objects')
      .values(
        ['a', 'b'].map((key, seq) => ({
          job_id: jobId,
          seq,
          key,
          key_hash: unique(key),
          status: 'pending' as const,
          size: 1,
          source_etag: null,
          error: null,
          last_attempt_at: null,
          lease_owner: null,
          lease_expires_at: null,
        })),
      )
      .execute();
    t.worker?.nudge();
    const objects = await settle(
      async () => {
        const rows = await db().selectFrom('job_objects').selectAll().where('job_id', '=', jobId).execute();
        return rows.every((o) => o.status === 'failed') ? rows : undefined;
      },
      { what: 'both objects to fail', detail: () => t.logs.text },
    );
    for (const o of objects) {
      assert.equal(o.attempts, 3, 'tried three times, not once and not forever');
      assert.equal(o.lease_owner, null);
      assert.match(o.error ?? '', CRASHED_3);
      // The refusal names the column and row it could not read (src/durable/), never the value.
      assert.match(
        o.error ?? '',
        new RegExp(
          `internal error: jobs\\.source of row ${jobId} is not JSON this version of ferry reads: not JSON$`,
        ),
      );
    }
    // Counted on the job. (The job itself cannot end: its end's webhook event is built from the same
    // unreadable plan. Only the objects' crashes are what this test is about.)
    const job = await db().selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
    assert.deepEqual([job.objects_failed, job.objects_pending], [2, 0]);
  });

  test('an object of a transfer over several objects the worker crashes on is failed after 3 crashes, and ends its transfer failed', async () => {
    const transferId = newId();
    const jobId = newId();
    const now = Date.now();
    const ref = JSON.stringify({ location_id: location.id, path: 'b/x' });
    await db()
      .insertInto('transfers')
      .values({
        id: transferId,
        workspace_id: location.workspaceId,
        location_ids: ',',
        kind: 'remove',
        status: 'running',
        spec: '{}',
        given_from: '["x/b/*", "x/b/y"]',
        given_to: null,
        bytes_total: null,
        error: null,
        lease_owner: null,
        lease_expires_at: null,
        run_after: Number.MAX_SAFE_INTEGER,
        created_at: now,
        updated_at: now,
        started_at: now,
        finished_at: null,
      })
      .execute();
    await db()
      .insertInto('jobs')
      .values({
        id: jobId,
        workspace_id: location.workspaceId,
        location_ids: ',',
        status: 'running',
        source: ref,
        destination: ref,
        overwrite: 'always',
        has_manifest: 0,
        planning_done: 1,
        objects_total: 1,
        objects_pending: 1,
        transfer_id: transferId,
        error: null,
        lease_owner: null,
        lease_expires_at: null,
        created_at: now,
        updated_at: now,
        started_at: now,
        finished_at: null,
      })
      .execute();
    await db()
      .insertInto('job_objects')
      .values({
        job_id: jobId,
        seq: 0,
        key: 'b/x',
        key_hash: unique('x'),
        status: 'pending',
        size: 1,
        source_etag: null,
        // Work the worker cannot read, as a bug could have written it: every claim of it crashes.
        work: '{"op":',
        error: null,
        last_attempt_at: null,
        lease_owner: null,
        lease_expires_at: null,
      })
      .execute();
    t.worker?.nudge();
    const transfer = await settledTransfer(transferId);
    assert.equal(transfer.status, 'failed');
    assert.equal(transfer.error, '1 of 1 object failed');
    const object = await db()
      .selectFrom('job_objects')
      .selectAll()
      .where('job_id', '=', jobId)
      .executeTakeFirstOrThrow();
    assert.equal(object.attempts, 3, 'tried three times, not once and not forever');
    assert.match(object.error ?? '', CRASHED_3);
    assert.match(
      object.error ?? '',
      new RegExp(
        `internal error: job_objects\\.work of row ${jobId}/0 is not JSON this version of ferry reads: not JSON$`,
      ),
    );
    const failures = await call({ method: 'GET', url: `/v1/transfers/${transferId}/failures` });
    assert.equal(failures.statusCode, 200, failures.body);
    assert.match(failures.json().failures[0].error, CRASHED_3);
  });

  test('a job object whose lease ran out on its third crash is failed, not claimed again', async () => {
    const jobId = newId();
    const now = Date.now();
    const ref = JSON.stringify({ location_id: location.id, path: 'b/' });
    await db()
      .insertInto('jobs')
      .values({
        id: jobId,
        workspace_id: location.workspaceId,
        location_ids: ',',
        status: 'running',
        source: ref,
        destination: ref,
        overwrite: 'always',
        has_manifest: 0,
        planning_done: 1,
        objects_total: 1,
        objects_pending: 1,
        error: null,
        lease_owner: null,
        lease_expires_at: null,
        created_at: now,
        updated_at: now,
        started_at: now,
        finished_at: null,
      })
      .execute();
    await db()
      .insertInto('job_objects')
      .values({
        job_id: jobId,
        seq: 0,
        key: 'poison',
        key_hash: unique('poison'),
        status: 'running',
        size: 1,
        source_etag: null,
        error: null,
        last_attempt_at: now - 60_000,
        lease_owner: 'gone:1:dead',
        lease_expires_at: now - 1000,
        attempts: 3,
        crashes: 3,
      })
      .execute();
    const job = await settle(
      async () => {
        const row = await db()
          .selectFrom('jobs')
          .selectAll()
          .where('id', '=', jobId)
          .executeTakeFirstOrThrow();
        return row.status === 'running' ? undefined : row;
      },
      { what: 'the job to end', detail: () => t.logs.text },
    );
    assert.equal(job.status, 'failed');
    assert.deepEqual([job.objects_failed, job.objects_pending], [1, 0]);
    const object = await db()
      .selectFrom('job_objects')
      .selectAll()
      .where('job_id', '=', jobId)
      .executeTakeFirstOrThrow();
    assert.equal(object.attempts, 3, 'not claimed again');
    assert.match(object.error ?? '', /^the worker crashed 3 times on this work: its process stopped/);
  });

  test('a send the dispatcher crashes on is failed after 3 crashes; one whose lease ran out on its third is failed at once', async () => {
    const clock = new ManualClock(Date.now());
    // A dispatcher of its own on an injected clock (the backoff between sends' attempts is 30 s and
    // more). Its mailer is never reached: the crash comes first.
    const dispatcher = new SendDispatcher(
      {
        db: t.services.db,
        clock,
        logger: t.services.logger,
        shares: t.services.shares,
        mailer: createMailer(new Secret('smtp://127.0.0.1:9')),
        owner: unique('dispatcher'),
        from: 'ferry@example.com',
        registry: new (await import('prom-client')).Registry(),
        random: () => 0,
      },
      { pollMs: 3_600_000 },
    );
    const insertSend = async (extra: Record<string, unknown>) => {
      const id = newId();
      await db()
        .insertInto('sends')
        .values({
          id,
          workspace_id: location.workspaceId,
          location_id: location.id,
          path: 'b/file.txt',
          file_name: 'file.txt',
          file_size: 1,
          recipients: '{"to": ["a@example.com"]}',
          recipient_count: 1,
          message: null,
          password_hash: null,
          link_expires_at: null,
          status: 'queued',
          scheduled_at: null,
          sent_at: null,
          error: null,
          refused: null,
          attempts: 0,
          run_after: clock.now(),
          lease_owner: null,
          lease_expires_at: null,
          created_at: clock.now(),
          updated_at: clock.now(),
          ...extra,
        })
        .execute();
      return id;
    };
    const read = (id: string) =>
      db().selectFrom('sends').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    // Recipients that are not JSON: reading them throws.
    const poisoned = await insertSend({ recipients: '{"to": [' });
    for (let crash = 1; crash <= 3; crash++) {
      await dispatcher.tick();
      const row = await read(poisoned);
      assert.equal(row.attempts, crash);
      assert.equal(row.status, crash < 3 ? 'queued' : 'failed', `after crash ${crash}`);
      clock.set(Math.max(clock.now(), row.run_after) + 1);
    }
    const failed = await read(poisoned);
    assert.match(failed.error ?? '', CRASHED_3);
    assert.match(failed.error ?? '', /JSON/);
    assert.equal(failed.lease_owner, null);

    const dead = await insertSend({
      lease_owner: 'gone:1:dead',
      lease_expires_at: clock.now() - 1,
      attempts: 3,
      crashes: 3,
    });
    await dispatcher.tick();
    const given = await read(dead);
    assert.equal(given.status, 'failed');
    assert.equal(given.attempts, 3, 'not claimed again');
    assert.match(given.error ?? '', /^the worker crashed 3 times on this work: its process stopped/);
    await dispatcher.stop();
  });
});
