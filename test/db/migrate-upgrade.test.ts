// A database that an earlier ferry brought up to date takes the migrations added since: Kysely applies
// them in the order of their names and refuses a new one that sorts before a migration the database
// already ran (src/db/migrations/index.ts). The earlier release's migrations are applied first, as that
// release did, then migrateToLatest must bring the rest, on SQLite and on PostgreSQL. When a release
// lands, its migrations join EARLIER_RELEASE.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { type Db, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { migrations } from '../../src/db/migrations/index.js';
import { Secret } from '../../src/secret.js';
import { createSchema, testDatabases } from '../support/databases.js';

/** The migrations of the release before this one (issue 24, landed 2026-11-27), as its index listed them. */
const EARLIER_RELEASE = new Set([
  '2026-11-22-foundation',
  '2026-11-22-transfers',
  '2026-11-22-transfers-source-etag',
  '2026-11-24-location-refresh',
  '2026-11-24-shares',
  '2026-11-24-sends',
  '2026-11-25-fair-claims',
  '2026-11-25-job-counters',
  '2026-11-25-share-guess-ids',
  '2026-11-25-share-resumes',
  '2026-11-25-upload-checkpoints',
  '2026-11-26-auth-invalidation',
  '2026-11-26-webhooks',
  '2026-11-26-work-crashes',
  '2026-11-26-workspace-rate-limits',
  '2026-11-26-webhooks-crashes',
  '2026-11-26-transfer-targets',
  '2026-11-26-send-sender-name',
  '2026-11-27-retention',
]);

async function upgrade(db: Db): Promise<void> {
  const schema =
    db.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely)).rows[0]?.schema
      : undefined;
  const earlier = Object.fromEntries(
    Object.entries(migrations).filter(([name]) => EARLIER_RELEASE.has(name)),
  );
  assert.equal(Object.keys(earlier).length, EARLIER_RELEASE.size, 'every earlier migration is still listed');
  const first = await new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => earlier },
    ...(schema ? { migrationTableSchema: schema } : {}),
  }).migrateToLatest();
  assert.equal(first.error, undefined, String(first.error));
  const added = await migrateToLatest(db);
  const expected = Object.keys(migrations)
    .filter((name) => !EARLIER_RELEASE.has(name))
    .sort();
  assert.deepEqual([...added].sort(), expected);
  assert.ok(expected.length > 0);
}

for (const database of await testDatabases()) {
  test(`a database migrated by the earlier release takes every migration added since [${database.name}]`, {
    skip: database.skip ?? false,
  }, async () => {
    if (database.name === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'ferry-upgrade-'));
      const db = openDatabase({ databaseUrl: undefined, dataDir: dir });
      try {
        await upgrade(db);
      } finally {
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      }
      return;
    }
    const schema = await createSchema();
    const db = openDatabase({ databaseUrl: new Secret(schema.url), dataDir: '', poolSize: 2 });
    try {
      await upgrade(db);
    } finally {
      await db.close();
      await schema.drop();
    }
  });
}
