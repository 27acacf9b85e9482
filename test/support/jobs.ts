// A bare job for tests of the engine's lifecycle modules: a fresh workspace and a job with no objects
// yet, written by the job lifecycle as the API writes one (source and destination refs point nowhere).
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../src/clock.js';
import type { Db } from '../../src/db/database.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import * as jobs from '../../src/lifecycle/jobs.js';

/** Creates a workspace named `<name>-<uuid>` and a job in it. */
export async function bareJob(
  db: Db,
  clock: Clock,
  name: string,
): Promise<{ jobId: string; workspaceId: string }> {
  const workspace = await ensureWorkspace(db.kysely, `${name}-${randomUUID()}`, clock);
  const ref = JSON.stringify({ location_id: randomUUID(), path: 'b/p/' });
  const { job_id } = await jobs.create(
    db.kysely,
    {
      id: randomUUID(),
      workspaceId: workspace.id,
      source: ref,
      destination: ref,
      overwrite: 'always',
      manifest: undefined,
    },
    clock.now(),
  );
  return { jobId: job_id, workspaceId: workspace.id };
}
