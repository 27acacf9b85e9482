// The share access log (docs/api.md, "Share links"): one row per counted download of a link, with when,
// from which address, and once the answer ends how many bytes went and whether it completed.
// Deleted with its share (a revoked link's pruning); a share's rows are read newest first.
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('share_accesses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('share_id', 'text', (c) => c.notNull().references('shares.id').onDelete('cascade'))
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    /** 1 once the whole answer was written, 0 while it runs or when it was cut. */
    .addColumn('completed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('ended_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('share_accesses_share_at')
    .on('share_accesses')
    .columns(['share_id', 'at', 'id'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('share_accesses').execute();
}
