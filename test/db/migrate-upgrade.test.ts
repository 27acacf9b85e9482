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
import { type Kysely, Migrator, sql } from 'kysely';
import { type Db, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { migrations } from '../../src/db/migrations/index.js';
import { newId } from '../../src/ids.js';
import { Secret } from '../../src/secret.js';
import { createSchema, testDatabases } from '../support/databases.js';

/** The migrations of the release before this one (issues 25 and 26, landed 2026-11-27), as its index listed them. */
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
  '2026-11-28-sync',
  '2026-11-28-plans',
  '2026-11-28-bandwidth',
  '2026-11-28-schedules',
  '2026-11-28-reports',
  '2026-11-29-key-scopes',
  '2026-11-29-audit',
  '2026-11-30-share-access',
]);

/**
 * Work of the earlier release, written before the upgrade: the upgrade fills the ids of the locations
 * it touches (2026-12-01-key-locations), which a key limited to some locations is filtered by.
 */
async function seedEarlierWork(db: Db): Promise<{ a: string; b: string }> {
  // biome-ignore lint/suspicious/noExplicitAny: the earlier release's schema, not today's
  const q = db.kysely as unknown as Kysely<any>;
  const now = Date.now();
  const ws = newId();
  const [a, b] = [newId(), newId()];
  await q.insertInto('workspaces').values({ id: ws, name: 'w', created_at: now }).execute();
  for (const [id, label] of [
    [a, 'alpha'],
    [b, 'bravo'],
  ] as const) {
    await q
      .insertInto('locations')
      .values({
        id,
        workspace_id: ws,
        provider: 's3',
        label,
        secret_envelope: 'x',
        status: 'active',
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
  const ref = (id: string) => JSON.stringify({ location_id: id, path: 'bucket/p/' });
  await q
    .insertInto('transfers')
    .values({
      id: newId(),
      workspace_id: ws,
      kind: 'move',
      status: 'queued',
      spec: JSON.stringify({
        kind: 'move',
        sources: [{ location_id: b, path: 'x/y' }],
        destination: { location_id: a, path: 'x/', folder: true },
      }),
      created_at: now,
      updated_at: now,
    })
    .execute();
  await q
    .insertInto('jobs')
    .values({
      id: newId(),
      workspace_id: ws,
      status: 'planning',
      source: ref(a),
      destination: ref(a),
      overwrite: 'always',
      created_at: now,
      updated_at: now,
    })
    .execute();
  await q
    .insertInto('schedules')
    .values({
      id: newId(),
      workspace_id: ws,
      name: 's',
      every: 'every day',
      cron: '0 0 * * *',
      timezone: 'UTC',
      action: JSON.stringify({ copy: { from: 'bravo:bucket/in/', to: { id: a, path: 'bucket/out/' } } }),
      paused: 0,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return { a, b };
}

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
  const { a, b } = await seedEarlierWork(db);
  const added = await migrateToLatest(db);
  const expected = Object.keys(migrations)
    .filter((name) => !EARLIER_RELEASE.has(name))
    .sort();
  assert.deepEqual([...added].sort(), expected);
  assert.ok(expected.length > 0);
  const both = `,${[a, b].sort().join(',')},`;
  const q = db.kysely;
  assert.deepEqual(
    (await q.selectFrom('transfers').select('location_ids').execute()).map((r) => r.location_ids),
    [both],
  );
  assert.deepEqual(
    (await q.selectFrom('jobs').select('location_ids').execute()).map((r) => r.location_ids),
    [`,${a},`],
  );
  assert.deepEqual(
    (await q.selectFrom('schedules').select('location_ids').execute()).map((r) => r.location_ids),
    [both],
  );
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
