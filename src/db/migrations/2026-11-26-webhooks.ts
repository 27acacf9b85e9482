// Webhooks: endpoints a workspace registers (the signing secret sealed like a location secret), the
// outbox of messages to deliver (one row per event and endpoint, written in the transaction of the move
// that caused the event, claimed by worker processes with a lease), and the log of delivery attempts.
// On PostgreSQL a trigger sends the `webhook` wake-up (src/db/signals.ts) when messages are queued:
// NOTIFY is delivered at commit, so a deliverer never wakes before it can see the rows. It is a row
// trigger so that an event no endpoint subscribed to (an insert of no rows) wakes nobody; the
// notifications of one transaction's rows fold into one.
// Frozen in time: Kysely<any>, no application imports.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    // ",a,b," so that one LIKE finds the endpoints of an event.
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret_envelope', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_at', 'bigint')
    .addColumn('failing_since', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhooks_workspace_created')
    .on('webhooks')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createTable('webhook_messages')
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_after', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_messages_pk', ['webhook_id', 'event_id'])
    .execute();
  await db.schema
    .createIndex('webhook_messages_due')
    .on('webhook_messages')
    .columns(['status', 'run_after'])
    .execute();
  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_attempts_webhook_created')
    .on('webhook_attempts')
    .columns(['webhook_id', 'created_at', 'id'])
    .execute();
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  // The channel name src/db/signals.ts listens on: ferry_<schema>_webhook.
  await sql
    .raw(
      `create function ferry_webhook_queued() returns trigger language plpgsql as $$
      begin
        perform pg_notify(
          left('ferry_' || regexp_replace(lower(current_schema()), '[^a-z0-9_]', '_', 'g') || '_webhook', 63),
          '');
        return null;
      end $$`,
    )
    .execute(db);
  await sql
    .raw(
      'create trigger webhook_queued after insert on webhook_messages ' +
        'for each row execute function ferry_webhook_queued()',
    )
    .execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_messages').execute();
  await db.schema.dropTable('webhooks').execute();
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql.raw('drop function if exists ferry_webhook_queued()').execute(db);
  }
}
