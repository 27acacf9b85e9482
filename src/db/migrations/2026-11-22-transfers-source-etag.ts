// The provider's tag (ETag) of each planned object's version as the source listing reported it, so a
// server-side copy can be pinned to that version and confirmed from the provider's answer without
// another request. Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('job_objects').addColumn('source_etag', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('job_objects').dropColumn('source_etag').execute();
}
