// Opens the one database ferry keeps: a SQLite file in the data dir by default, PostgreSQL when
// FERRY_DATABASE_URL says so. Both are reached through the same Kysely<Database>; the few places where
// the dialects differ read `dialect` rather than testing the driver.
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, sql } from 'kysely';
import pg from 'pg';
import { ensureDataDir, privateFile, tightenFile } from '../data-dir.js';
import type { Secret } from '../secret.js';
import { SchemaScopedPostgresDialect } from './introspector.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';
import { BUSY_TIMEOUT_MS, BusyRetryingSqliteDialect } from './sqlite-busy.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** Where the data lives, without credentials, for logs. */
  description: string;
  close(): Promise<void>;
  /** SQLite only: what its triggers report of this process's writes, and other processes' commits. */
  rowChanges?: RowChanges;
}

/**
 * The changes authentication caches depend on (docs/engine.md, "Authentication cache"), as SQLite
 * reports them: its triggers call `ferry_changed(kind, id)` inside every write this process makes to
 * api_keys or workspaces, and PRAGMA data_version moves whenever another connection commits.
 */
export interface RowChanges {
  subscribe(listener: (kind: string, id: string) => void): () => void;
  dataVersion(): number;
}

export interface OpenOptions {
  dataDir: string;
  databaseUrl: Secret | undefined;
  /** PostgreSQL pool size per process. */
  poolSize?: number;
}

/** How long a PostgreSQL connection attempt may take. */
const CONNECT_TIMEOUT_MS = 5000;

// BIGINT (int8) columns hold epoch milliseconds, well inside Number's exact range.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

/**
 * better-sqlite3 with its prepared statements kept: Kysely prepares every query anew, which costs more
 * than running it for the short queries on the request path (authentication, lookups). A statement
 * that is busy (an unfinished iterate()) is never handed out twice.
 */
function withStatementCache(database: SQLite.Database, max = 500): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = database.prepare.bind(database);
  return new Proxy(database, {
    get(target, property, receiver) {
      if (property !== 'prepare') return Reflect.get(target, property, receiver);
      return (source: string) => {
        const cached = cache.get(source);
        if (cached && !cached.busy) return cached;
        const statement = prepare(source);
        if (!cached) {
          if (cache.size >= max) cache.delete(cache.keys().next().value as string);
          cache.set(source, statement);
        }
        return statement;
      };
    },
  });
}

export function openDatabase(options: OpenOptions): Db {
  if (options.databaseUrl) {
    const url = options.databaseUrl.reveal();
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      types: pgTypes,
      // While the server is away a request waits this long for a connection, then answers 503
      // (docs/api.md, "The database going away") rather than hanging on a host that does not answer.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    // A server that goes away (a restart ends every session) is an 'error' event of each client, and
    // of the pool for an idle one: unheard, either ends the process. The pool has already dropped an
    // idle client that failed; a lent-out one fails its query, which is where it is reported, and is
    // dropped on release (it is no longer queryable). The next query connects afresh.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const parsed = new URL(url);
    const kysely = new Kysely<Database>({ dialect: new SchemaScopedPostgresDialect({ pool }) });
    return {
      kysely,
      dialect: 'postgres',
      description: `postgres://${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`,
      close: () => kysely.destroy(),
    };
  }
  ensureDataDir(options.dataDir);
  const file = join(options.dataDir, 'ferry.db');
  // The database is 0600 before SQLite first opens it; SQLite gives the -wal and -shm files it creates
  // the database file's permissions (docs/api.md, "Files on disk").
  privateFile(file);
  // Files an older ferry left readable by others are tightened, by path and before SQLite opens them:
  // opening and closing them here would drop SQLite's locks (src/data-dir.ts, privateFile).
  for (const extra of [`${file}-wal`, `${file}-shm`]) tightenFile(extra);
  const sqlite = new SQLite(file);
  // WAL lets the CLI and the server use the file at once; busy_timeout waits out a writer briefly,
  // src/db/sqlite-busy.ts longer without holding the event loop.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  const listeners = new Set<(kind: string, id: string) => void>();
  sqlite.function('ferry_changed', { deterministic: false }, (kind: unknown, id: unknown) => {
    for (const listener of listeners) listener(String(kind), String(id));
    return null;
  });
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  const rowChanges: RowChanges = {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    dataVersion: () => dataVersion.get() as number,
  };
  const kysely = new Kysely<Database>({
    dialect: new BusyRetryingSqliteDialect({ database: withStatementCache(sqlite) }),
  });
  return { kysely, dialect: 'sqlite', description: file, close: () => kysely.destroy(), rowChanges };
}

/**
 * Brings the schema up to date; the names of the migrations it applied. On PostgreSQL the migrator sees
 * ferry's own schema only (src/db/introspector.ts), so other schemas that come and go do not fail it.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  // Kysely looks for its bookkeeping tables in every schema unless told which one; pin it to the
  // schema this connection writes to, so databases sharing a server do not see each other's.
  const schema =
    db.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}
