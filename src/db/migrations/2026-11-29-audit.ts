// The audit log (docs/api.md, "Audit log"): one row per request that changed something, per share
// download or password failure, and per refused authentication, written in the transaction of the change
// it records. Never a secret or a body: an action name, a target (an id or a location-relative path), the
// HTTP status, the key, the client's address and user agent. Pruned after FERRY_AUDIT_RETENTION_DAYS.
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // No foreign key: a refused authentication has no workspace (null), and a workspace's record
    // outlives nothing it names (a deleted location, a revoked key).
    .addColumn('workspace_id', 'text')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target', 'text')
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema
    .createIndex('audit_events_workspace_at')
    .on('audit_events')
    .columns(['workspace_id', 'at', 'id'])
    .execute();
  await db.schema.createIndex('audit_events_at').on('audit_events').column('at').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
}
