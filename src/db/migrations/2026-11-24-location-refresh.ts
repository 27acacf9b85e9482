// What the OAuth refresher needs on a location: a lease, so that one process at a time refreshes it
// (the owner and when the lease ends, like the transfer claims), a time before which a refresh that
// failed for a passing reason is not tried again, and a secret generation that only a replaced secret
// moves (a refreshed token does not), so that open stores know when they are out of date.
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('locations').addColumn('refresh_lease_owner', 'text').execute();
  await db.schema.alterTable('locations').addColumn('refresh_lease_expires_at', 'bigint').execute();
  await db.schema
    .alterTable('locations')
    .addColumn('refresh_after', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('locations')
    .addColumn('secret_version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  // The refresher's scan: requested refreshes, and tokens that expire soon.
  await db.schema
    .createIndex('locations_refresh_requested')
    .on('locations')
    .columns(['refresh_requested'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('locations_refresh_requested').execute();
  for (const column of [
    'secret_version',
    'refresh_after',
    'refresh_lease_expires_at',
    'refresh_lease_owner',
  ]) {
    await db.schema.alterTable('locations').dropColumn(column).execute();
  }
}
