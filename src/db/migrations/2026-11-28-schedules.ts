// Schedules (docs/api.md, "Schedules"): a workspace's recurring copies and syncs, each a row claimed with
// a lease when its next_run_at comes (like every queue row, src/queue/claim.ts), and the record of its
// runs. The unique (schedule_id, due_at) of a run makes one run per due time, however many worker
// processes claim the schedule. A job started by a schedule carries its id (no foreign key: deleting a
// schedule keeps the jobs it ran).
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    // As the caller wrote it, and the five-field cron expression it reads as.
    .addColumn('every', 'text', (c) => c.notNull())
    .addColumn('cron', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    // JSON {"copy": {...}} or {"sync": {...}}.
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0))
    // Null while paused.
    .addColumn('next_run_at', 'bigint')
    .addColumn('last_run_at', 'bigint')
    .addColumn('last_job_id', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('schedules_workspace_created')
    .on('schedules')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('schedules_due').on('schedules').columns(['next_run_at']).execute();
  await db.schema
    .createTable('schedule_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('schedule_id', 'text', (c) => c.notNull().references('schedules.id').onDelete('cascade'))
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('ran_at', 'bigint', (c) => c.notNull())
    // starting (between the claim and the job), started, skipped_overlap or failed.
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('job_id', 'text')
    .addColumn('reason', 'text')
    .addUniqueConstraint('schedule_runs_due', ['schedule_id', 'due_at'])
    .execute();
  await db.schema.alterTable('jobs').addColumn('schedule_id', 'text').execute();
  await db.schema.createIndex('jobs_schedule').on('jobs').columns(['schedule_id', 'created_at']).execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('jobs_schedule').execute();
  await db.schema.alterTable('jobs').dropColumn('schedule_id').execute();
  await db.schema.dropTable('schedule_runs').execute();
  await db.schema.dropTable('schedules').execute();
}
