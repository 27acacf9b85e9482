// Nothing replaced is lost (docs/api.md, "Undo"): each job object keeps what its work did at its
// destination (created, replaced or deleted an object, where the replaced one was backed up, and what
// was written), so that an undo job can put it back; an undo job names the job it undoes. A job's kind
// is text with no check constraint (its values are checked by the application, src/states.ts), so the
// new kind `undo` needs no change on either database. Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('job_objects').addColumn('touched', 'text').execute();
  await db.schema.alterTable('jobs').addColumn('undo_of', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').dropColumn('undo_of').execute();
  await db.schema.alterTable('job_objects').dropColumn('touched').execute();
}
