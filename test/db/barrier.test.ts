// The barrier (src/db/signals.ts, docs/engine.md "Authentication cache"): when Signals.barrier()
// resolves true, every notification committed before the call has reached the listeners. The
// notifications are sent by another connection, as another process's triggers send them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';
import { waitUntil } from '../support/wait.js';

const ROUNDS = 300;

await eachDatabase('the barrier', (database) => {
  if (database.name !== 'postgres') return; // SQLite: one process, the report is part of the write
  let t: TestApp;
  let other: pg.Client;
  before(async () => {
    t = await startTestApp(database);
    other = new pg.Client({ connectionString: t.config.databaseUrl?.reveal() });
    await other.connect();
    await waitUntil(() => t.services.signals.generation() !== undefined, { what: 'the listener' });
  });
  after(async () => {
    await other.end();
    await t.close();
  });

  test(`a notification committed before barrier() is heard when it resolves (${ROUNDS} rounds)`, async () => {
    const { rows } = await other.query<{ schema: string }>('select current_schema() as schema');
    const channel = `ferry_${rows[0]?.schema.toLowerCase().replace(/[^a-z0-9_]/g, '_')}_auth`.slice(0, 63);
    const heard = new Set<string>();
    const stop = t.services.signals.listen('auth', (payload) => heard.add(payload));
    try {
      for (let round = 0; round < ROUNDS; round++) {
        await other.query('select pg_notify($1, $2)', [channel, `key:${round}`]);
        assert.equal(await t.services.signals.barrier(), true);
        assert.ok(heard.has(`key:${round}`), `round ${round}`);
      }
    } finally {
      stop();
    }
  });
});
