// Issue 27: SQLite's busy and locked answers are retried, never surfaced as 500 (docs/api.md, "The
// database going away"; src/db/sqlite-busy.ts). A second real connection to the app's database file
// (as `ferry keys create` or a backup tool would open it) holds the write lock with BEGIN IMMEDIATE for
// longer than SQLite's busy_timeout: a write made meanwhile waits, without holding the event loop, and
// succeeds once the lock is let go within the retries; one held past every retry answers 503 with
// Retry-After, and the same write succeeds after the release.
//
// SQLite only: its lock is what is tested. The PostgreSQL half of "the database going away" is
// test/engine/database-restart.test.ts.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { busyRefusals } from '../../src/db/sqlite-busy.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { unique } from '../support/fixtures.js';
import { waitUntil } from '../support/wait.js';

describe('SQLite busy [sqlite]', () => {
  let t: TestApp;
  let other: SQLite.Database;

  before(async () => {
    t = await startTestApp({ name: 'sqlite', skip: undefined });
    other = new SQLite(join(t.config.dataDir, 'ferry.db'));
  });

  after(async () => {
    if (other?.inTransaction) other.exec('rollback');
    other?.close();
    await t?.close();
  });

  /** A write: a new location. */
  const createLocation = () =>
    t.request({
      method: 'POST',
      url: '/v1/locations',
      payload: {
        provider: 's3',
        label: unique('busy'),
        secret: { access_key_id: unique('AK'), secret_access_key: unique('SK') },
      },
    });

  test('a write lock held past busy_timeout and then let go: a write made meanwhile waits for it without holding the event loop, and succeeds', async () => {
    other.exec('begin immediate');
    let settled = false;
    let write: Promise<{ res: Awaited<ReturnType<typeof createLocation>>; at: number }>;
    let releasedAt: number;
    try {
      const refused = busyRefusals();
      write = createLocation().then((res) => {
        settled = true;
        return { res, at: performance.now() };
      });
      // The lock is held until the write has been refused busy, so past busy_timeout, and waits for its
      // next try (the retries last seconds more, whatever the machine's speed).
      await waitUntil(() => busyRefusals() > refused, { what: 'the write to be refused busy once' });
      // The process answers while the write waits for the lock (each try blocks it busy_timeout at most).
      const health = await t.request({ method: 'GET', url: '/healthz' });
      assert.equal(health.statusCode, 200);
      assert.equal(settled, false, 'the write is still waiting for the lock');
    } finally {
      other.exec('commit');
      releasedAt = performance.now();
    }
    const { res, at } = await write;
    assert.equal(res.statusCode, 201, res.body);
    assert.ok(at >= releasedAt, 'the write went in after the release');
  });

  test('a write lock held past every retry: 503 with Retry-After, never 500; the same write succeeds once it is let go', async () => {
    other.exec('begin immediate');
    let res: Awaited<ReturnType<typeof createLocation>>;
    try {
      res = await createLocation();
    } finally {
      other.exec('commit');
    }
    assert.equal(res.statusCode, 503, res.body);
    assert.deepEqual(res.json(), { error: 503, message: 'the database is busy; try again shortly' });
    assert.ok(Number(res.headers['retry-after']) >= 1, `Retry-After: ${res.headers['retry-after']}`);
    const again = await createLocation();
    assert.equal(again.statusCode, 201, again.body);
  });
});
