// A job keeps its object counts and finished bytes as it goes, so reading a job costs the same at any
// size: the lifecycle moves that change an object's status change these in the same transaction.
// Existing jobs are counted once here. Frozen in time: Kysely<any>, no application imports.
import { type Kysely, sql } from 'kysely';

const COUNTERS = [
  'objects_total',
  'objects_pending',
  'objects_succeeded',
  'objects_skipped',
  'objects_failed',
];

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  for (const column of [...COUNTERS, 'bytes_finished']) {
    await db.schema
      .alterTable('jobs')
      .addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  const count = (where: string) =>
    sql.raw(`(select count(*) from job_objects o where o.job_id = jobs.id${where ? ` and ${where}` : ''})`);
  await sql`
    update jobs set
      objects_total = ${count('')},
      objects_pending = ${count("o.status in ('pending', 'running')")},
      objects_succeeded = ${count("o.status = 'succeeded'")},
      objects_skipped = ${count("o.status = 'skipped'")},
      objects_failed = ${count("o.status = 'failed'")},
      bytes_finished = (select coalesce(sum(o.bytes_done), 0) from job_objects o
                        where o.job_id = jobs.id and o.status in ('succeeded', 'skipped'))`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const column of [...COUNTERS, 'bytes_finished']) {
    await db.schema.alterTable('jobs').dropColumn(column).execute();
  }
}
