// What lets a range resume a download on a link with a download limit: the downloads counted there,
// by client address, kept for an hour. A range that continues a download from the same address (a
// resume, a download manager's other parts) counts nothing; a range from anyone else is a download of
// its own.
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('share_downloads')
    .addColumn('share_id', 'text', (c) => c.notNull().references('shares.id').onDelete('cascade'))
    .addColumn('client', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('share_downloads_share_client')
    .on('share_downloads')
    .columns(['share_id', 'client', 'at'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('share_downloads').execute();
}
