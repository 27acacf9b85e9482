// Claims by job and by workspace (fair share between workspaces): a job's due objects are found by
// (job_id, status, run_after) without reading its other rows, and a workspace's running transfers by
// (workspace_id, status). The first index also serves everything (job_id, status) did.
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('job_objects_job_claim')
    .on('job_objects')
    .columns(['job_id', 'status', 'run_after'])
    .execute();
  await db.schema.dropIndex('job_objects_job_status').execute();
  await db.schema
    .createIndex('transfers_workspace_status')
    .on('transfers')
    .columns(['workspace_id', 'status'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('transfers_workspace_status').execute();
  await db.schema
    .createIndex('job_objects_job_status')
    .on('job_objects')
    .columns(['job_id', 'status'])
    .execute();
  await db.schema.dropIndex('job_objects_job_claim').execute();
}
