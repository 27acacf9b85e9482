// One undo of a job at a time (docs/api.md, "Undo"): at most one job with the same undo_of that is
// planning or running. POST /v1/jobs/{id}/undo checks first and answers 409 naming the undo
// that holds the place; this index is what keeps two requests at the same moment (two API processes on
// PostgreSQL) from both starting one. A finished undo leaves the place free for the next. Partial unique indexes are the same SQL on both databases. Frozen in time: Kysely<any>, no
// application imports.
import { type Kysely, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create unique index jobs_one_undo on jobs (undo_of) where status in ('planning', 'running')`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index jobs_one_undo`.execute(db);
}
