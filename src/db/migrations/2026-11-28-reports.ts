// A job's report (docs/api.md, "Reports") shows the checksums a copy compared: each object keeps the
// source's and the destination's, as `kind:value` (md5:..., sha1:...), written when it settles as copied;
// null when no hash kind was reported by both sides (then only the size was compared). Frozen in time:
// Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('job_objects').addColumn('source_hash', 'text').execute();
  await db.schema.alterTable('job_objects').addColumn('destination_hash', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('job_objects').dropColumn('destination_hash').execute();
  await db.schema.alterTable('job_objects').dropColumn('source_hash').execute();
}
