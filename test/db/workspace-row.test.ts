// A workspace's row by id (src/db/workspace-row.ts), the one query the domain finds a record by: its own
// workspace's row is found; another workspace's is not, as an id that is not a UUID is not, and a
// further condition narrows it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { systemClock } from '../../src/clock.js';
import { workspaceRow } from '../../src/db/workspace-row.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { newId } from '../../src/ids.js';
import * as jobs from '../../src/lifecycle/jobs.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';

await eachDatabase('a workspace row by id', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database);
  });
  after(async () => {
    await t.close();
  });

  test("a workspace's own row is found; another workspace's, a non-UUID and one outside `within` are not", async () => {
    const db = t.services.db.kysely;
    const mine = (await ensureWorkspace(db, 'rows-mine', systemClock)).id;
    const theirs = (await ensureWorkspace(db, 'rows-theirs', systemClock)).id;
    const ref = JSON.stringify({ location_id: newId(), path: 'bucket/prefix/' });
    const { job_id } = await jobs.create(
      db,
      {
        id: newId(),
        workspaceId: mine,
        source: ref,
        destination: ref,
        overwrite: 'always',
        manifest: undefined,
      },
      Date.now(),
    );
    const found = await workspaceRow(db, 'jobs', mine, job_id);
    assert.equal(found?.id, job_id);
    assert.equal(found?.workspace_id, mine);
    assert.equal(await workspaceRow(db, 'jobs', theirs, job_id), undefined, "another workspace's");
    assert.equal(await workspaceRow(db, 'jobs', mine, 'not-a-uuid'), undefined);
    assert.equal(await workspaceRow(db, 'jobs', mine, newId()), undefined, 'no such row');
    assert.equal(
      (await workspaceRow(db, 'jobs', mine, job_id, sql<boolean>`status = 'planning'`))?.id,
      job_id,
    );
    assert.equal(await workspaceRow(db, 'jobs', mine, job_id, sql<boolean>`status = 'running'`), undefined);
  });
});
