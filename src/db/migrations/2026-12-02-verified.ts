// Every byte proven (docs/api.md, "Verification"): each object whose bytes were written keeps how
// they were proven, `size` or the hash kinds that proved them (md5, crc32c,md5, ...), for its report
// line; null for objects that wrote none (skipped, removed, deleted, a provider's own move). A job
// counts the objects only their size could prove. Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('job_objects').addColumn('verified', 'text').execute();
  await db.schema
    .alterTable('jobs')
    .addColumn('objects_size_only', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').dropColumn('objects_size_only').execute();
  await db.schema.alterTable('job_objects').dropColumn('verified').execute();
}
