// Where a streamed copy's multipart upload stands, so that the next attempt (after a crash, a lost
// lease, a passing failure) continues it instead of starting from byte 0: the upload, and a row per
// part as the provider acknowledges it. Keyed by the work being run: "object:<job id>:<seq>" or
// "transfer:<id>".
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('copy_checkpoints')
    .addColumn('work', 'text', (c) => c.primaryKey())
    .addColumn('lease_owner', 'text', (c) => c.notNull())
    .addColumn('destination_path', 'text', (c) => c.notNull())
    .addColumn('source_etag', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('upload_id', 'text', (c) => c.notNull())
    .addColumn('part_size', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('copy_checkpoint_parts')
    .addColumn('work', 'text', (c) => c.notNull().references('copy_checkpoints.work').onDelete('cascade'))
    .addColumn('part_index', 'integer', (c) => c.notNull())
    .addColumn('tag', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('copy_checkpoint_parts_pk', ['work', 'part_index'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('copy_checkpoint_parts').execute();
  await db.schema.dropTable('copy_checkpoints').execute();
}
