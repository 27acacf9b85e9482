// SQLite's lock, waited for without holding the event loop (docs/api.md, "The database going away").
// Another connection to the file (`ferry keys create`, `ferry migrate`, a backup tool's BEGIN
// IMMEDIATE) can hold the write lock. better-sqlite3 is synchronous, so SQLite's own busy_timeout waits
// with the whole process stopped: it is kept short here, and a statement still refused busy or locked is
// tried again a bounded number of times after waits that let every other request and loop run. A
// refused statement did nothing, so trying it again is safe. Transactions begin IMMEDIATE: they take
// the write lock at their start (where the wait and the retry apply) rather than at their first write,
// where a deferred transaction whose snapshot another connection overtook fails busy with no wait at
// all (SQLITE_BUSY_SNAPSHOT) and could only be run again whole. What is still busy after the last try
// surfaces as a busy error, which the API answers 503 (src/http/errors.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import { databaseUnavailable } from './unavailable.js';

/** PRAGMA busy_timeout: the longest one try blocks the process waiting for the lock. */
export const BUSY_TIMEOUT_MS = 250;

/** The waits between tries: about 3.5 s of them, 5.5 s in all with the tries' own busy_timeout. */
const RETRY_WAITS_MS = [50, 100, 200, 400, 800, 1000, 1000];

/** Tries refused busy in this process so far (a test waits on it to know a write is held back). */
let refusedBusy = 0;

export function busyRefusals(): number {
  return refusedBusy;
}

async function retryBusy<T>(run: () => Promise<T>): Promise<T> {
  for (const wait of RETRY_WAITS_MS) {
    try {
      return await run();
    } catch (err) {
      if (databaseUnavailable(err) !== 'busy') throw err;
      refusedBusy++;
    }
    await sleep(wait);
  }
  return run();
}

class BusyRetryingDriver extends SqliteDriver {
  /** The one connection, wrapped once. */
  #wrapped: DatabaseConnection | undefined;

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    this.#wrapped ??= {
      executeQuery: <R>(query: CompiledQuery): Promise<QueryResult<R>> =>
        retryBusy(() => connection.executeQuery<R>(query)),
      streamQuery: <R>(query: CompiledQuery, chunkSize?: number) =>
        connection.streamQuery<R>(query, chunkSize),
    };
    return this.#wrapped;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

export class BusyRetryingSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new BusyRetryingDriver(this.#config);
  }
}
