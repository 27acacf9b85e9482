// Durable work: single transfers, bulk jobs with their objects, and the copy accept log behind the
// per-workspace rate limit. Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('transfers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('spec', 'text', (c) => c.notNull())
    .addColumn('bytes_total', 'bigint')
    .addColumn('bytes_done', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_after', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('transfers_claim')
    .on('transfers')
    .columns(['status', 'run_after', 'created_at'])
    .execute();
  await db.schema
    .createIndex('transfers_workspace')
    .on('transfers')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('overwrite', 'text', (c) => c.notNull())
    .addColumn('has_manifest', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('planning_done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('planned_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('planning_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('jobs_status').on('jobs').columns(['status']).execute();
  await db.schema
    .createIndex('jobs_workspace')
    .on('jobs')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute();

  // A manifest waits here until the planner has turned it into job objects.
  await db.schema
    .createTable('job_manifests')
    .addColumn('job_id', 'text', (c) => c.primaryKey().references('jobs.id').onDelete('cascade'))
    .addColumn('keys', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('job_objects')
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    // Keys may be 4096 bytes, too long for a PostgreSQL btree entry: uniqueness rides on a hash.
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint')
    .addColumn('bytes_done', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('run_after', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addPrimaryKeyConstraint('job_objects_pk', ['job_id', 'seq'])
    .addUniqueConstraint('job_objects_key', ['job_id', 'key_hash'])
    .execute();
  await db.schema
    .createIndex('job_objects_claim')
    .on('job_objects')
    .columns(['status', 'run_after'])
    .execute();
  await db.schema
    .createIndex('job_objects_job_status')
    .on('job_objects')
    .columns(['job_id', 'status'])
    .execute();
  await db.schema.createIndex('job_objects_owner').on('job_objects').columns(['lease_owner']).execute();

  await db.schema
    .createTable('copy_accepts')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('accepted_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('copy_accepts_window')
    .on('copy_accepts')
    .columns(['workspace_id', 'accepted_at'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['copy_accepts', 'job_objects', 'job_manifests', 'jobs', 'transfers']) {
    await db.schema.dropTable(table).execute();
  }
}
