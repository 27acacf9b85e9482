// How many claims of a transfer, a job object or a send ended without a settlement: the worker crashed
// on it (an exception that is not a classified failure) or its process died or froze while holding the
// lease. Counted at the claim and uncounted when the attempt settles or is handed back, so a row the
// process dies on keeps the count; past FERRY_WORK_MAX_CRASHES the work is failed instead of being
// claimed again (docs/api.md, "Background work that keeps failing"). Frozen in time: Kysely<any>, no
// application imports.
import type { Kysely } from 'kysely';

const TABLES = ['transfers', 'job_objects', 'sends'];

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await db.schema
      .alterTable(table)
      .addColumn('crashes', 'integer', (col) => col.notNull().defaultTo(0))
      .execute();
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await db.schema.alterTable(table).dropColumn('crashes').execute();
}
