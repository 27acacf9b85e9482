// One undo of a job at a time, held by the database (migration 2026-12-03-z-one-undo, docs/api.md
// "Undo"): POST /v1/jobs/{id}/undo checks first, and the unique index jobs_one_undo is what stops two
// requests at the same moment that both passed the check. Here the check is left out: the second undo
// written while the first is planning or running is refused by the index, and the refusal is the one
// isUniqueViolation names (the route answers it 409); a finished undo frees the place.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { systemClock } from '../../src/clock.js';
import { isUniqueViolation } from '../../src/db/unavailable.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { newId } from '../../src/ids.js';
import * as jobs from '../../src/lifecycle/jobs.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';

await eachDatabase('one undo at a time', (database) => {
  let t: TestApp;
  let workspaceId: string;
  before(async () => {
    t = await startTestApp(database);
    workspaceId = (await ensureWorkspace(t.services.db.kysely, 'one-undo', systemClock)).id;
  });
  after(async () => {
    await t.close();
  });

  const ref = { location_id: newId(), path: 'bucket/prefix/' };
  const undoOf = (undone: string) =>
    jobs.create(
      t.services.db.kysely,
      {
        id: newId(),
        workspaceId,
        kind: 'undo',
        undoOf: undone,
        source: JSON.stringify(ref),
        destination: JSON.stringify(ref),
        overwrite: 'always',
        manifest: undefined,
      },
      Date.now(),
    );
  const set = (id: string, status: 'running' | 'complete' | 'partial' | 'failed' | 'canceled') =>
    t.services.db.kysely.updateTable('jobs').set({ status }).where('id', '=', id).execute();

  test('a second undo of one job is refused while the first is planning or running, and taken once it has finished', async () => {
    const undone = newId();
    const first = await undoOf(undone);
    for (const status of ['planning', 'running'] as const) {
      if (status !== 'planning') await set(first.job_id, status);
      const err = await undoOf(undone).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err !== undefined, `a second undo was written beside one ${status}`);
      assert.equal(isUniqueViolation(err), true, String(err));
    }
    let holder = first.job_id;
    for (const status of ['complete', 'failed', 'partial', 'canceled'] as const) {
      await set(holder, status);
      holder = (await undoOf(undone)).job_id;
    }
    // Undos of other jobs are not in each other's way.
    await undoOf(newId());
    assert.equal(isUniqueViolation(new Error('no code')), false);
  });
});
