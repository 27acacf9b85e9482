// Sync (docs/api.md, "Sync"): a job says what kind it is (a bulk copy or a sync) and carries the options
// it was given (compare, delete, max_delete, filter) as JSON; it counts the objects a sync deleted, and
// the deletions it holds back until its copies have settled (docs/engine.md, "Sync").
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('jobs')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('copy'))
    .execute();
  await db.schema.alterTable('jobs').addColumn('options', 'text').execute();
  for (const column of ['objects_deleted', 'objects_held']) {
    await db.schema
      .alterTable('jobs')
      .addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['objects_held', 'objects_deleted', 'options', 'kind']) {
    await db.schema.alterTable('jobs').dropColumn(column).execute();
  }
}
