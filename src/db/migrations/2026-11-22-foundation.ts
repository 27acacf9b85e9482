// Workspaces, API keys and locations. Migrations are frozen in time: they take Kysely<any> and import
// nothing from the application.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // Bumped by triggers on every change to the workspace's locations, so a process can tell whether
    // the location list it holds is still current with one read of this row.
    .addColumn('locations_version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('api_keys_workspace')
    .on('api_keys')
    .columns(['workspace_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('locations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text')
    .addColumn('secret_envelope', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('validation_error', 'text')
    .addColumn('access_token_expires_at', 'bigint')
    .addColumn('refresh_requested', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('consecutive_refresh_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_refresh_attempt_at', 'bigint')
    .addColumn('failure_reason', 'text')
    .addColumn('last_refresh_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('locations_workspace_label')
    .on('locations')
    .columns(['workspace_id', 'label'])
    .execute();
  await db.schema
    .createIndex('locations_workspace_created')
    .on('locations')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute();
  await addLocationsVersionTriggers(db);
  // The refresher's scan looks for OAuth tokens that expire soon or were asked for.
  await db.schema
    .createIndex('locations_refresh_due')
    .on('locations')
    .columns(['access_token_expires_at'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
async function addLocationsVersionTriggers(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    for (const [event, row] of [
      ['insert', 'new'],
      ['update', 'new'],
      ['delete', 'old'],
    ] as const) {
      await sql
        .raw(
          `create trigger locations_version_${event} after ${event} on locations begin ` +
            `update workspaces set locations_version = locations_version + 1 where id = ${row}.workspace_id; end`,
        )
        .execute(db);
    }
    return;
  }
  await sql
    .raw(
      `create function ferry_bump_locations_version() returns trigger language plpgsql as $$
      begin
        if tg_op = 'DELETE' then
          update workspaces set locations_version = locations_version + 1 where id = old.workspace_id;
          return old;
        end if;
        update workspaces set locations_version = locations_version + 1 where id = new.workspace_id;
        return new;
      end $$`,
    )
    .execute(db);
  await sql
    .raw(
      'create trigger locations_version after insert or update or delete on locations ' +
        'for each row execute function ferry_bump_locations_version()',
    )
    .execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('locations').execute();
  await db.schema.dropTable('api_keys').execute();
  await db.schema.dropTable('workspaces').execute();
}
