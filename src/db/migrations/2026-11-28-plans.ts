// Plans, a preview that binds (docs/api.md, "Plans"): a dry run of a bulk copy, move or remove writes
// what it would do as a plan (`plans`) and its entries (`plan_entries`, one row per object, in listing
// order), and a job that runs a plan names it (`jobs.plan_id`). A plan is run at most once: `ran_at`,
// `job_id` and `transfer_id` are set in the transaction that queues its run. `counts` is null while
// the dry run is still writing entries. Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('plans')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('given', 'text', (c) => c.notNull())
    .addColumn('counts', 'text')
    .addColumn('total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('ran_at', 'bigint')
    .addColumn('job_id', 'text')
    .addColumn('transfer_id', 'text')
    .execute();
  await db.schema.createIndex('plans_expires').on('plans').column('expires_at').execute();
  await db.schema
    .createTable('plan_entries')
    .addColumn('plan_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint')
    .addColumn('etag', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('work', 'text')
    .addPrimaryKeyConstraint('plan_entries_pk', ['plan_id', 'seq'])
    .execute();
  await db.schema.alterTable('jobs').addColumn('plan_id', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').dropColumn('plan_id').execute();
  await db.schema.dropTable('plan_entries').execute();
  await db.schema.dropIndex('plans_expires').execute();
  await db.schema.dropTable('plans').execute();
}
