// Each process keeps the principals it authenticated (docs/engine.md, "Authentication cache"); these
// triggers tell every process at once when a key or a workspace's locations_version changes, whoever
// writes it. On PostgreSQL they NOTIFY the schema's `auth` channel with `key:<id>` or `ws:<id>`; on
// SQLite, one process, they call ferry_changed(kind, id), a function each connection registers.
// Frozen in time: Kysely<any>, no application imports.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

const KEY_COLUMNS = 'token_hash, workspace_id, expires_at, revoked_at';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    // The channel is the one src/db/signals.ts listens on: ferry_<schema>_auth, with the schema lowered
    // and anything but [a-z0-9_] made "_", cut to PostgreSQL's 63 bytes.
    await sql
      .raw(
        `create function ferry_notify_auth() returns trigger language plpgsql as $$
        begin
          perform pg_notify(
            left('ferry_' || regexp_replace(lower(tg_table_schema), '[^a-z0-9_]', '_', 'g') || '_auth', 63),
            tg_argv[0] || ':' || (case when tg_op = 'DELETE' then old.id else new.id end));
          return null;
        end $$`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger api_keys_auth after update of ${KEY_COLUMNS} or delete on api_keys ` +
          `for each row execute function ferry_notify_auth('key')`,
      )
      .execute(db);
    await sql
      .raw(
        'create trigger workspaces_auth after update of locations_version or delete on workspaces ' +
          `for each row execute function ferry_notify_auth('ws')`,
      )
      .execute(db);
    return;
  }
  await sql
    .raw(
      `create trigger api_keys_auth_update after update of ${KEY_COLUMNS} on api_keys ` +
        `begin select ferry_changed('key', new.id); end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger api_keys_auth_delete after delete on api_keys begin select ferry_changed('key', old.id); end`,
    )
    .execute(db);
  await sql
    .raw(
      'create trigger workspaces_auth_update after update of locations_version on workspaces ' +
        `begin select ferry_changed('ws', new.id); end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger workspaces_auth_delete after delete on workspaces begin select ferry_changed('ws', old.id); end`,
    )
    .execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql.raw('drop trigger api_keys_auth on api_keys').execute(db);
    await sql.raw('drop trigger workspaces_auth on workspaces').execute(db);
    await sql.raw('drop function ferry_notify_auth()').execute(db);
    return;
  }
  for (const name of [
    'api_keys_auth_update',
    'api_keys_auth_delete',
    'workspaces_auth_update',
    'workspaces_auth_delete',
  ]) {
    await sql.raw(`drop trigger ${name}`).execute(db);
  }
}
