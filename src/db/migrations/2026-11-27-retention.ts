// Retention (docs/api.md, "Retention"): a table of periodic tasks, one row per task, claimed with a
// lease like every other queue, so that of many worker processes on one database one runs a task at a
// time and the next run's time is durable. The indexes let the pruner find finished rows by when they
// ended without reading the whole table.
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

const FINISHED_INDEXES: Array<[name: string, table: string, columns: string[]]> = [
  ['transfers_finished', 'transfers', ['status', 'finished_at']],
  ['jobs_finished', 'jobs', ['status', 'finished_at']],
  ['sends_finished', 'sends', ['status', 'updated_at']],
  ['webhook_messages_finished', 'webhook_messages', ['status', 'updated_at']],
  ['shares_revoked', 'shares', ['revoked_at']],
  // An event's attempts, looked up by the event: its message is deleted only once none is left.
  ['webhook_attempts_event', 'webhook_attempts', ['webhook_id', 'event_id']],
];

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('periodic_tasks')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('run_after', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('last_run_at', 'bigint')
    .execute();
  for (const [name, table, columns] of FINISHED_INDEXES) {
    await db.schema.createIndex(name).on(table).columns(columns).execute();
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const [name] of FINISHED_INDEXES) await db.schema.dropIndex(name).execute();
  await db.schema.dropTable('periodic_tasks').execute();
}
