// What a transfer is (docs/api.md, "Polling"). A transfer keeps what the caller gave, as JSON text:
// `given_from` (a string, an array of them, or a copy's target object) and `given_to` (none for a
// remove); rows accepted before this have neither. A transfer over several objects owns a job
// (`jobs.transfer_id`) whose objects each carry their own work (`job_objects.work`: the operation with
// its full source and destination), where a bulk copy's objects carry only a key. Frozen in time:
// Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('transfers').addColumn('given_from', 'text').execute();
  await db.schema.alterTable('transfers').addColumn('given_to', 'text').execute();
  await db.schema.alterTable('jobs').addColumn('transfer_id', 'text').execute();
  await db.schema.alterTable('job_objects').addColumn('work', 'text').execute();
  await db.schema.createIndex('jobs_transfer').on('jobs').column('transfer_id').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('jobs_transfer').execute();
  await db.schema.alterTable('job_objects').dropColumn('work').execute();
  await db.schema.alterTable('jobs').dropColumn('transfer_id').execute();
  await db.schema.alterTable('transfers').dropColumn('given_to').execute();
  await db.schema.alterTable('transfers').dropColumn('given_from').execute();
}
