// Scoped keys (docs/api.md, "Scopes"): each API key may be limited to some scopes, a JSON array fixed
// when the key is created; null (every key before this release) is every scope.
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('scopes', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('scopes').execute();
}
