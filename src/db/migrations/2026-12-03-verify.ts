// Verify (docs/api.md, "Verify"): a job of kind verify keeps, on each object, what it found (equal,
// differ, missing_in_destination, missing_in_source), and counts each on the job. The job's kind and
// options are text already (2026-11-28-sync), with no check on their values on either database, so the
// new kind needs no change there. Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

const COUNTERS = [
  'objects_equal',
  'objects_differ',
  'objects_missing_in_destination',
  'objects_missing_in_source',
];

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('job_objects').addColumn('verdict', 'text').execute();
  for (const column of COUNTERS) {
    await db.schema
      .alterTable('jobs')
      .addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const column of [...COUNTERS].reverse())
    await db.schema.alterTable('jobs').dropColumn(column).execute();
  await db.schema.alterTable('job_objects').dropColumn('verdict').execute();
}
