// Migrations on PostgreSQL while other schemas of the same database come and go (other ferry test
// runs, other applications). Kysely's migrator reads the tables and columns of every schema to find
// its own bookkeeping tables; a schema or table dropped during that read fails it with 3F000, 42P01 or
// 42703, which is no fault of ours: migrateToLatest tries again.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { PostgresIntrospector, sql } from 'kysely';
import pg from 'pg';
import { migrateToLatest, openDatabase } from '../../src/db/database.js';
import { CurrentSchemaIntrospector } from '../../src/db/introspector.js';
import { Secret } from '../../src/secret.js';
import { createSchema, PG_URL, testDatabases } from '../support/databases.js';

const postgres = (await testDatabases()).find((d) => d.name === 'postgres');

test('migrations succeed while other schemas are created and dropped beside them', {
  skip: postgres?.skip ?? false,
}, async () => {
  let churning = true;
  let churned = 0;
  const churn = async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      while (churning) {
        const name = `ferry_churn_${randomBytes(4).toString('hex')}`;
        await client.query(`create schema ${name}`);
        await client.query(
          `create table ${name}.t (${Array.from({ length: 30 }, (_, i) => `c${i} int`).join(', ')})`,
        );
        await client.query(`drop schema ${name} cascade`);
        churned++;
      }
    } finally {
      await client.end();
    }
  };
  const churners = Array.from({ length: 3 }, churn);
  try {
    for (let round = 0; round < 4; round++) {
      await Promise.all(
        Array.from({ length: 3 }, async () => {
          const schema = await createSchema();
          const db = openDatabase({ databaseUrl: new Secret(schema.url), dataDir: '', poolSize: 2 });
          try {
            const applied = await migrateToLatest(db);
            assert.ok(applied.length > 10, `${applied.length} migrations applied`);
          } finally {
            await db.close();
            await schema.drop();
          }
        }),
      );
    }
  } finally {
    churning = false;
    await Promise.all(churners);
  }
  assert.ok(churned > 0, 'other schemas came and went meanwhile');
});

// Kysely's introspector, the reference here, reads every schema of the database, so another test
// file dropping its schema meanwhile fails it with the errors named at the top (seen in CI: 3F000).
// That race is the reason ferry has its own; the reference is asked again, a bounded number of times.
const RACED = new Set(['3F000', '42P01', '42703']);
async function raced<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (attempt >= 20 || typeof code !== 'string' || !RACED.has(code)) throw error;
    }
  }
}

test("the schema-scoped introspector answers for ferry's schema what Kysely's answers for it", {
  skip: postgres?.skip ?? false,
}, async () => {
  const schema = await createSchema();
  const db = openDatabase({ databaseUrl: new Secret(schema.url), dataDir: '', poolSize: 2 });
  try {
    await migrateToLatest(db);
    const current = (await sql<{ s: string }>`select current_schema() as s`.execute(db.kysely)).rows[0]?.s;
    for (const withInternalKyselyTables of [false, true]) {
      const ours = await new CurrentSchemaIntrospector(db.kysely).getTables({ withInternalKyselyTables });
      const kysely = (
        await raced(() => new PostgresIntrospector(db.kysely).getTables({ withInternalKyselyTables }))
      ).filter((t) => t.schema === current);
      assert.ok(ours.length > 10);
      // As JSON: Kysely writes an absent comment as `comment: undefined`, this one leaves it out.
      assert.deepEqual(JSON.parse(JSON.stringify(ours)), JSON.parse(JSON.stringify(kysely)));
    }
    assert.deepEqual(await new CurrentSchemaIntrospector(db.kysely).getSchemas(), [{ name: current }]);
  } finally {
    await db.close();
    await schema.drop();
  }
});
