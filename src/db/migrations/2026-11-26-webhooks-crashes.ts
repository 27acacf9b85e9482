// How many attempts of a webhook message crashed (an exception in ferry, or a process that died holding
// the lease) rather than failed at the endpoint, so a message that crashes every attempt is failed after
// a few (FERRY_WORK_MAX_CRASHES) instead of being claimed again forever. Frozen in time: Kysely<any>, no
// application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('webhook_messages')
    .addColumn('crashes', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_messages').dropColumn('crashes').execute();
}
