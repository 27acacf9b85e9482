// GET /v1/jobs/{id} reads the job and the bytes of its running objects in one statement
// (src/domain/transfers/views.ts): bytes_done is the finished bytes plus the running objects' bytes
// so far, and a job of another workspace is not found.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import * as jobs from '../../src/lifecycle/jobs.js';
import { keyHash } from '../../src/lifecycle/object-planning.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';

await eachDatabase('reading a job', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database);
  });
  after(async () => {
    await t.close();
  });

  /** A planned job of three objects in the workspace, as the planner writes one. */
  const plannedJob = async (workspaceId: string) => {
    const db = t.services.db.kysely;
    const ref = JSON.stringify({ location_id: randomUUID(), path: 'b/p/' });
    const job = {
      id: randomUUID(),
      workspaceId,
      source: ref,
      destination: ref,
      overwrite: 'always' as const,
    };
    const now = Date.now();
    const { job_id } = await jobs.create(db, { ...job, manifest: undefined }, now);
    await db.updateTable('jobs').set({ lease_owner: 'test' }).where('id', '=', job_id).execute();
    const batch = ['a', 'b', 'c'].map((key) => ({ key, keyHash: keyHash(key), size: 1000, etag: null }));
    await jobs.commitBatch(db, 'test', job_id, 0, batch, now);
    await jobs.planningDone(db, 'test', job_id, now);
    return job_id;
  };

  test('bytes_done counts the finished bytes and the running objects; another workspace gets 404', async () => {
    const db = t.services.db.kysely;
    const { workspace_id } = await db.selectFrom('api_keys').select('workspace_id').executeTakeFirstOrThrow();
    const id = await plannedJob(workspace_id);
    await db.updateTable('jobs').set({ bytes_finished: 1000 }).where('id', '=', id).execute();
    await db
      .updateTable('job_objects')
      .set({ status: 'running', bytes_done: 250 })
      .where('job_id', '=', id)
      .where('key', 'in', ['b', 'c'])
      .execute();
    const res = await t.request({ method: 'GET', url: `/v1/jobs/${id}` });
    assert.equal(res.statusCode, 200, res.body);
    const job = res.json() as { job_id: string; bytes_done: number; counts: { total: number } };
    assert.equal(job.job_id, id);
    assert.equal(job.counts.total, 3);
    assert.equal(job.bytes_done, 1500);

    const other = await ensureWorkspace(db, `other-${randomUUID()}`, t.services.clock);
    const theirs = await plannedJob(other.id);
    const missing = await t.request({ method: 'GET', url: `/v1/jobs/${theirs}` });
    assert.equal(missing.statusCode, 404, missing.body);
  });
});
