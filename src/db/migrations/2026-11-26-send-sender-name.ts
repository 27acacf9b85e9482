// The name a send's mail goes out under (docs/api.md, "Send", `sender_name`): null means the
// workspace's name. Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sends').addColumn('sender_name', 'text').execute();
}
