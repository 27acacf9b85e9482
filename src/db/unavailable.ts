// Which database failures are passing (docs/api.md, "The database going away"): PostgreSQL cannot be
// reached, is restarting or dropped the connection; SQLite's file is locked by another connection
// past every retry. The same statement may succeed shortly, so the API answers 503 with Retry-After
// and the background loops wait and try again, instead of a 500 or a crash counted against the work.
// This is the one module that reads the drivers' error shapes (pg's and better-sqlite3's); it also
// tells a unique constraint refused (isUniqueViolation), for the writes a unique index guards.

/** Why the database cannot answer now: unreachable (PostgreSQL) or busy (SQLite's lock). */
export type Unavailability = 'unreachable' | 'busy';

/** Errors of the socket under pg: the server is not there, or went away mid-conversation. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs that say the server is going, gone or not accepting yet: class 08 (connection exception),
 * 57P01 admin_shutdown (a fast shutdown ended the session), 57P02 crash_shutdown, 57P03
 * cannot_connect_now (starting up or shutting down), 53300 too_many_connections.
 */
function unreachableState(code: string): boolean {
  return (
    code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300'
  );
}

/**
 * pg's own errors carry no code, only words: a connection the server closed, a client the pool handed
 * out after its socket died, a connection attempt that timed out.
 */
const PG_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Connection terminated due to connection timeout)/;

function classifyOne(err: object): Unavailability | undefined {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    // better-sqlite3 reports the extended code: SQLITE_BUSY_SNAPSHOT, SQLITE_LOCKED_SHAREDCACHE, …
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
    if (SOCKET_CODES.has(code) || unreachableState(code)) return 'unreachable';
    // A Unix socket whose file is gone (FERRY_DATABASE_URL with host=/run/postgresql): the server is
    // not there, as ECONNREFUSED says over TCP.
    if (code === 'ENOENT' && (err as { syscall?: unknown }).syscall === 'connect') return 'unreachable';
  }
  const message = (err as { message?: unknown }).message;
  if (typeof message === 'string' && PG_MESSAGES.test(message)) return 'unreachable';
  return undefined;
}

/**
 * Whether `err` (or an error it wraps: `cause`, or an AggregateError's `errors`, as Node gives for a
 * host name with several addresses) says the database cannot answer now; undefined for any other
 * failure.
 */
export function databaseUnavailable(err: unknown, depth = 0): Unavailability | undefined {
  if (typeof err !== 'object' || err === null || depth > 4) return undefined;
  const own = classifyOne(err);
  if (own !== undefined) return own;
  const { cause, errors } = err as { cause?: unknown; errors?: unknown };
  const found = databaseUnavailable(cause, depth + 1);
  if (found !== undefined) return found;
  if (Array.isArray(errors)) {
    for (const inner of errors) {
      const each = databaseUnavailable(inner, depth + 1);
      if (each !== undefined) return each;
    }
  }
  return undefined;
}

/** What a caller is told (a response, a row's error): never the driver's words, which name hosts. */
export function unavailableMessage(why: Unavailability): string {
  return why === 'busy'
    ? 'the database is busy; try again shortly'
    : 'the database is not reachable; try again shortly';
}

/**
 * A write refused by a unique constraint or index: SQLSTATE 23505 on PostgreSQL,
 * SQLITE_CONSTRAINT_UNIQUE (or _PRIMARYKEY) from better-sqlite3. Wrapped errors are looked through.
 */
export function isUniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; typeof e === 'object' && e !== null; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
      return true;
  }
  return false;
}
