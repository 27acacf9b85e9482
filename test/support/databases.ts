// The databases every database-touching test runs on: SQLite always, and PostgreSQL at
// FERRY_TEST_DATABASE_URL (default: the local server). Each test app gets its own PostgreSQL schema
// (or SQLite file), so test files run in parallel without seeing each other's rows.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_URL = process.env.FERRY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  /** Why this database is skipped, or undefined to run. */
  skip: string | undefined;
}

async function postgresReachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (err) {
    const reason = `PostgreSQL at ${new URL(PG_URL).host} is not reachable (${(err as Error).message})`;
    // In CI both databases are required: an unreachable server fails the run, never skips it.
    if (process.env.CI === 'true') throw new Error(reason);
    return reason;
  } finally {
    await client.end().catch(() => {});
  }
}

let cached: Promise<TestDatabase[]> | undefined;

export function testDatabases(): Promise<TestDatabase[]> {
  cached ??= postgresReachable().then((skip) => [
    { name: 'sqlite', skip: undefined },
    { name: 'postgres', skip },
  ]);
  return cached;
}

/** A fresh PostgreSQL schema; the URL selects it through search_path. */
export async function createSchema(): Promise<{ schema: string; url: string; drop(): Promise<void> }> {
  const schema = `ferry_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`create schema ${schema}`);
    // Which test file made it, for a schema a run leaves behind (the runner gives each file a process):
    // test/....test.ts, whether the file runs as TypeScript or compiled in the runner's tree.
    const file = (process.argv.find((a) => /\.test\.[jt]s$/.test(a)) ?? process.argv[1] ?? 'unknown')
      .replace(/^.*?\/(test\/)/, '$1')
      .replace(/\.js$/, '.ts');
    await admin.query(`comment on schema ${schema} is ${pg.escapeLiteral(file)}`);
  } finally {
    await admin.end();
  }
  // pg decodes the query with decodeURIComponent, so the space must be %20 (URLSearchParams writes +).
  const separator = PG_URL.includes('?') ? '&' : '?';
  return {
    schema,
    url: `${PG_URL}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      try {
        await c.query(`drop schema if exists ${schema} cascade`);
      } finally {
        await c.end();
      }
    },
  };
}
