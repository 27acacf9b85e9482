// The audit log's retention (docs/api.md, "Audit log"): FERRY_AUDIT_RETENTION_DAYS (default 90) and the
// pruner's step that deletes older events in batches, refused authentications (no workspace) too, on
// both databases; it runs even when FERRY_RETENTION_DAYS keeps finished work forever.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Registry } from 'prom-client';
import { startBackground } from '../../src/background.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { record } from '../../src/domain/audit/audit.js';
import { Pruner } from '../../src/domain/retention/pruner.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';

const DAY = 86_400_000;

test('FERRY_AUDIT_RETENTION_DAYS: 90 days by default, 0 or "never" keeps forever, anything else but whole days is refused', () => {
  assert.equal(loadConfig({}).auditRetentionDays, 90);
  assert.equal(loadConfig({ FERRY_AUDIT_RETENTION_DAYS: '7' }).auditRetentionDays, 7);
  assert.equal(loadConfig({ FERRY_AUDIT_RETENTION_DAYS: '0' }).auditRetentionDays, undefined);
  assert.equal(loadConfig({ FERRY_AUDIT_RETENTION_DAYS: 'never' }).auditRetentionDays, undefined);
  for (const bad of ['-1', '1.5', 'forever', '90d', '36501']) {
    assert.throws(() => loadConfig({ FERRY_AUDIT_RETENTION_DAYS: bad }), ConfigError, bad);
  }
});

await eachDatabase('audit retention', (database) => {
  const clock = new ManualClock();
  let t: TestApp;
  before(async () => {
    // Finished work is kept forever here: the audit log's retention runs on its own.
    t = await startTestApp(database, { clock, env: { FERRY_RETENTION_DAYS: 'never' } });
  });
  after(() => t.close());

  test('events older than the retention go in batches, refused authentications too; newer ones stay; the pruner runs without FERRY_RETENTION_DAYS', async () => {
    const background = startBackground(t.services, { worker: { pollMs: 50 } });
    try {
      assert.ok(background.pruner, 'a pruner for the audit log alone');
      assert.equal(background.pruner.options.retentionMs, undefined);
      assert.equal(background.pruner.options.auditRetentionMs, 90 * DAY);
    } finally {
      await background.stop(1000);
    }

    const db = t.services.db.kysely;
    const ws = (await ensureWorkspace(db, unique('ws'), clock)).id;
    const now = clock.now();
    const add = (workspaceId: string | null, at: number) =>
      record(
        db,
        { workspaceId, keyId: null, ip: '198.51.100.1', userAgent: undefined },
        { action: workspaceId ? 'copy' : 'auth.refused', status: workspaceId ? 202 : 401 },
        at,
      );
    for (let i = 0; i < 4; i++) await add(ws, now - 91 * DAY - i);
    await add(null, now - 100 * DAY);
    await add(ws, now - 89 * DAY);
    await add(null, now - DAY);

    const registry = new Registry();
    const pruner = new Pruner(
      { db: t.services.db, clock, logger: t.services.logger, owner: unique('pruner'), registry },
      { retentionMs: undefined, auditRetentionMs: 90 * DAY, batch: 2 },
    );
    // The background's pruner may have claimed the task's first run: this one runs once it is due again.
    clock.advance(2 * 3_600_000);
    const pruned = await pruner.runDue();
    const left = await db.selectFrom('audit_events').select(['at', 'workspace_id']).orderBy('at').execute();
    assert.deepEqual(
      left.map((row) => Math.round((Number(row.at) - now) / DAY)),
      [-89, -1],
      'the events within the retention stay',
    );
    assert.equal(pruned?.audit_events, 5);
    assert.equal(pruned?.transfers, 0);
    const metric = await registry.getSingleMetric('ferry_retention_pruned_total')?.get();
    const byTable = Object.fromEntries((metric?.values ?? []).map((v) => [v.labels.table, v.value]));
    assert.equal(byTable.audit_events, 5);
  });

  test('a pruner without an audit retention leaves the log alone', async () => {
    const db = t.services.db.kysely;
    const ws = (await ensureWorkspace(db, unique('ws'), clock)).id;
    await record(
      db,
      { workspaceId: ws, keyId: null, ip: '198.51.100.2', userAgent: undefined },
      { action: 'move', status: 202 },
      clock.now() - 1000 * DAY,
    );
    clock.advance(2 * 3_600_000);
    const pruner = new Pruner(
      {
        db: t.services.db,
        clock,
        logger: t.services.logger,
        owner: unique('pruner'),
        registry: new Registry(),
      },
      { retentionMs: 30 * DAY },
    );
    const pruned = await pruner.runDue();
    assert.equal(pruned?.audit_events, 0);
    const kept = await db.selectFrom('audit_events').select('id').where('workspace_id', '=', ws).execute();
    assert.equal(kept.length, 1);
  });
});
