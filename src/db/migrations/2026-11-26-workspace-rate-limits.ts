// Rate limits per workspace for every route that costs (docs/api.md, "Rate limits and caps"): the copy
// accept log becomes one log of named buckets. A row is one accepted request, kept until its window
// has passed. On PostgreSQL one function takes a place (lock, read, clean up, record) so that the
// check is one statement from the caller; every statement inside a volatile function reads a fresh
// snapshot, so it sees the places other processes took before it got the lock. SQLite takes a place
// with one conditional insert (a writing statement holds the write lock from its first read), and a
// trigger clears the bucket's expired rows as it records.
// Frozen in time: Kysely<any>, no application imports.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_accepts')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('accepted_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('rate_accepts_window')
    .on('rate_accepts')
    .columns(['workspace_id', 'bucket', 'expires_at'])
    .execute();
  await sql`insert into rate_accepts (workspace_id, bucket, accepted_at, expires_at)
            select workspace_id, 'copy', accepted_at, accepted_at + 60000 from copy_accepts`.execute(db);
  await db.schema.dropTable('copy_accepts').execute();
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    await sql
      .raw(
        `create trigger rate_accepts_expire after insert on rate_accepts begin
           delete from rate_accepts
            where workspace_id = new.workspace_id and bucket = new.bucket and expires_at <= new.accepted_at;
         end`,
      )
      .execute(db);
    return;
  }
  // Answers null when the place is taken, else when the oldest place that blocks it frees up.
  await sql
    .raw(
      `create function ferry_rate_take(p_workspace text, p_bucket text, p_now bigint, p_window bigint,
                                       p_limit integer) returns bigint language plpgsql volatile as $$
      declare
        blocking bigint;
      begin
        perform pg_advisory_xact_lock(hashtext('ferry-rate:' || p_bucket || ':' || p_workspace));
        select expires_at into blocking from rate_accepts
         where workspace_id = p_workspace and bucket = p_bucket and expires_at > p_now
         order by expires_at desc offset p_limit - 1 limit 1;
        if found then
          return blocking;
        end if;
        delete from rate_accepts
         where workspace_id = p_workspace and bucket = p_bucket and expires_at <= p_now;
        insert into rate_accepts (workspace_id, bucket, accepted_at, expires_at)
        values (p_workspace, p_bucket, p_now, p_now + p_window);
        return null;
      end $$`,
    )
    .execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql.raw('drop function if exists ferry_rate_take(text, text, bigint, bigint, integer)').execute(db);
  }
  await db.schema.dropTable('rate_accepts').execute();
  await db.schema
    .createTable('copy_accepts')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('accepted_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('copy_accepts_window')
    .on('copy_accepts')
    .columns(['workspace_id', 'accepted_at'])
    .execute();
}
