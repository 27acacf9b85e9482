// What a transfer was asked to do, as the caller gave it (docs/api.md, "Polling"): `from` (a string, an
// array of them, or a copy's target object) and `to` (none for a remove), as JSON text. Rows accepted
// before this have neither, and their resource shows neither. Frozen in time: Kysely<any>, no
// application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('transfers').addColumn('given_from', 'text').execute();
  await db.schema.alterTable('transfers').addColumn('given_to', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('transfers').dropColumn('given_to').execute();
  await db.schema.alterTable('transfers').dropColumn('given_from').execute();
}
