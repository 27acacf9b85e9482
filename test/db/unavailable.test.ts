// src/db/unavailable.ts: which driver errors mean the database cannot answer now (503, and the loops
// wait) and which are ferry's own failures (500). The shapes are those pg and better-sqlite3 give; the
// real ones are met in test/engine/database-restart.test.ts and test/db/sqlite-busy.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { databaseUnavailable } from '../../src/db/unavailable.js';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test('PostgreSQL away, restarting or cut off is unreachable', () => {
  for (const err of [
    coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
    coded('ECONNRESET'),
    coded('57P01', 'terminating connection due to administrator command'),
    coded('57P03', 'the database system is starting up'),
    coded('08006', 'connection failure'),
    new Error('Connection terminated unexpectedly'),
    new Error('Client has encountered a connection error and is not queryable'),
    new Error('timeout exceeded when trying to connect'),
    // Node's connection to a name with several addresses: every attempt refused.
    new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]),
    new Error('wrapped', { cause: coded('57P01') }),
    // A Unix socket whose file is gone: the server is stopped (host=/run/postgresql).
    Object.assign(coded('ENOENT', 'connect ENOENT /run/postgresql/.s.PGSQL.5432'), { syscall: 'connect' }),
  ]) {
    assert.equal(databaseUnavailable(err), 'unreachable', String(err));
  }
});

test("SQLite's busy and locked answers are busy", () => {
  for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_LOCKED', 'SQLITE_LOCKED_SHAREDCACHE']) {
    assert.equal(databaseUnavailable(coded(code, 'database is locked')), 'busy', code);
  }
});

test('every other failure is not the database being away', () => {
  for (const err of [
    coded('23505', 'duplicate key value violates unique constraint'),
    coded('42P01', 'relation "jobs" does not exist'),
    coded('SQLITE_CONSTRAINT_UNIQUE'),
    coded('ENOENT'),
    new Error('Connection to the store failed'),
    new TypeError('x is not a function'),
    'a string',
    undefined,
  ]) {
    assert.equal(databaseUnavailable(err), undefined, String(err));
  }
});
