// Every byte proven (docs/api.md, "Verification"), from a bulk copy's first attempt: each planned object
// keeps the hashes its source's listing reported (JSON of kind → lower-case hex; null when the listing
// gave none, and for manifest keys and the objects of a plan, which are stat'ed), so that the first
// attempt checks the source's own hash against the bytes it reads without a stat per object. Dated
// after 2026-12-04-proof-of-transfers, which the migrator must have run first. Frozen in time:
// Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('job_objects').addColumn('source_hashes', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('job_objects').dropColumn('source_hashes').execute();
}
