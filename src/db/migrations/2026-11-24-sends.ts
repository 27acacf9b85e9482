// Sends: a file e-mailed as a share link, now or at a time, delivered by worker processes as durable
// work (claimed with a lease like transfers, retried with backoff). The share is made when the mail
// goes out, so its token lives only in the mail; what it needs is kept here (the password as a hash).
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sends')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('location_id', 'text', (c) => c.notNull().references('locations.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('file_size', 'bigint', (c) => c.notNull())
    .addColumn('recipients', 'text', (c) => c.notNull())
    .addColumn('recipient_count', 'integer', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('password_hash', 'text')
    .addColumn('link_expires_at', 'bigint')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('scheduled_at', 'bigint')
    .addColumn('sent_at', 'bigint')
    .addColumn('error', 'text')
    .addColumn('refused', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_after', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sends_due').on('sends').columns(['status', 'run_after']).execute();
  await db.schema
    .createIndex('sends_workspace_created')
    .on('sends')
    .columns(['workspace_id', 'created_at'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sends').execute();
}
