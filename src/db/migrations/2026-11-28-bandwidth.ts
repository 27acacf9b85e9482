// Bandwidth caps (docs/api.md, "Bandwidth"): a copy's `bandwidth_limit` (bytes per second) is kept on
// its transfer (a single copy) or its job (a bulk copy), and every cap's token bucket that processes
// share is a row of bandwidth_buckets: its level in bytes (negative when granted ahead) at a time in
// ms. A process takes a slice of a bucket with one upsert (src/engine/bandwidth.ts).
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('transfers').addColumn('bandwidth_limit', 'bigint').execute();
  await db.schema.alterTable('jobs').addColumn('bandwidth_limit', 'bigint').execute();
  await db.schema
    .createTable('bandwidth_buckets')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('tokens', 'double precision', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('bandwidth_buckets_at').on('bandwidth_buckets').column('at').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('bandwidth_buckets').execute();
  await db.schema.alterTable('jobs').dropColumn('bandwidth_limit').execute();
  await db.schema.alterTable('transfers').dropColumn('bandwidth_limit').execute();
}
