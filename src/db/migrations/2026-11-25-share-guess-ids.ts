// A password attempt is recorded before the password is checked, so that counting and recording are
// one statement and concurrent guesses cannot pass the limit; a right password then takes its record
// back by this id. Rows from before have none (they are only ever counted).
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('share_guesses').addColumn('id', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('share_guesses').dropColumn('id').execute();
}
