// `ferry audit` (docs/cli.md) as a real process against a ferry service in this process, on both
// databases: filters, paging through next_cursor past one page, --limit, --json, --csv with formulas
// neutralised, and -o FILE.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { record } from '../../src/domain/audit/audit.js';
import { eachDatabase } from '../support/fixtures.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry client', (database) => {
  let s: Service;
  const dir = mkdtempSync(join(tmpdir(), 'ferry-audit-'));
  before(async () => {
    s = await startService(database);
  });
  after(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('audit: newest first across pages, filtered, --limit, --json, --csv (formulas neutralised) and -o FILE', async () => {
    const { run, token } = await s.workspace();
    const me = (await s.t.request({ method: 'GET', url: '/v1/key', token })).json();
    const key = await s.t.services.db.kysely
      .selectFrom('api_keys')
      .select('workspace_id')
      .where('id', '=', me.id)
      .executeTakeFirstOrThrow();
    const db = s.t.services.db.kysely;
    const t0 = Date.parse('2026-10-01T00:00:00Z');
    // 1005 copies (more than one page of the API's 1000), one move and one share download.
    const context = { workspaceId: key.workspace_id, keyId: me.id, ip: '192.0.2.1', userAgent: 'ferry-cli' };
    for (let i = 0; i < 1005; i++) {
      await record(db, context, { action: 'copy', target: `job-${i}`, status: 202 }, t0 + i);
    }
    await record(db, context, { action: 'move', target: '=HYPERLINK("x")', status: 202 }, t0 + 2000);
    await record(
      db,
      { ...context, keyId: null },
      { action: 'share.download', target: 'share-1', status: 200 },
      t0 + 3000,
    );

    const all = json<{ events: Array<{ action: string; target?: string; key_name?: string }> }>(
      await run('audit', '--json'),
    );
    assert.equal(all.events.length, 1007, 'every page');
    assert.deepEqual(
      all.events.slice(0, 3).map((e) => e.action),
      ['share.download', 'move', 'copy'],
    );
    assert.equal(all.events[2]?.target, 'job-1004');
    assert.equal(all.events.at(-1)?.target, 'job-0');
    assert.equal(all.events[1]?.key_name, 'cli test');

    const limited = json<{ events: unknown[] }>(
      await run('audit', '--action', 'copy', '--limit', '3', '--json'),
    );
    assert.equal(limited.events.length, 3);
    const window = json<{ events: Array<{ action: string }> }>(
      await run(
        'audit',
        '--after',
        new Date(t0 + 1500).toISOString(),
        '--before',
        new Date(t0 + 2500).toISOString(),
        '--key',
        me.id,
        '--json',
      ),
    );
    assert.deepEqual(
      window.events.map((e) => e.action),
      ['move'],
    );

    const table = ok(await run('audit', '--limit', '2')).stdout;
    assert.match(table, /^AT\s+ACTION\s+STATUS\s+TARGET\s+KEY\s+IP/m);
    assert.match(table, /share\.download\s+200\s+share-1/);

    const csv = ok(await run('audit', '--action', 'move', '--csv')).stdout;
    assert.equal(
      csv,
      'at,action,target,status,key_id,key_name,ip,user_agent\r\n' +
        `${new Date(t0 + 2000).toISOString()},move,"'=HYPERLINK(""x"")",202,${me.id},cli test,192.0.2.1,ferry-cli\r\n`,
    );
    const file = join(dir, 'audit.csv');
    const written = ok(await run('audit', '--csv', '-o', file));
    assert.equal(written.stdout, '');
    assert.match(written.stderr, /1007 events written to/);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\r\n');
    assert.equal(lines.length, 1008);

    const bad = await run('audit', '--action', 'nope');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /action/);
  });
  test("a change made by the CLI is in the log with the CLI's user agent", async () => {
    const { run } = await s.workspace();
    const made = json<{ id: string }>(await run('keys', 'create', 'by-cli', '--scope', 'read', '--json'));
    const row = await s.t.services.db.kysely
      .selectFrom('audit_events')
      .select(['action', 'user_agent'])
      .where('target', '=', made.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { action: 'key.create', user_agent: `ferry-cli (node ${process.version})` });
  });
});
