// Every byte proven (docs/api.md, "Verification"), for a single transfer too: a transfer that wrote
// bytes (a copy, a move by copy and delete, a pull) keeps how they were proven, `size` or the hash kinds
// that proved them, as a bulk job's object does (2026-12-02-verified). Null for one that wrote none and
// for transfers that ended before it was kept: unknown, never `size`. Dated after 2026-12-03-verify,
// which the migrator must have run first. Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('transfers').addColumn('verified', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('transfers').dropColumn('verified').execute();
}
