// docs/api.md "Audit log": GET /v1/audit reads the caller's workspace's events newest first, filtered by
// action, key and time, paged by next_cursor, with each key's current name; admin scope; both databases.
// The events are inserted with record(), as the changes write them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type AuditAction, record } from '../../src/domain/audit/audit.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';

const T0 = Date.parse('2026-11-01T00:00:00Z');

await eachDatabase('the audit log', (database) => {
  let t: TestApp;
  const clock = new ManualClock(T0);
  before(async () => {
    t = await startTestApp(database, { clock });
  });
  after(() => t.close());

  /** A workspace, an admin key in it and a second key, with `count` events spread over keys and actions. */
  async function world() {
    const ws = await ensureWorkspace(t.services.db.kysely, unique('ws'), t.services.clock);
    const admin = await t.services.apiKeys.create(ws.id, { name: unique('admin') });
    const other = await t.services.apiKeys.create(ws.id, { name: unique('other') });
    const call = (url: string, token = admin.token) => t.request({ method: 'GET', url, token });
    const add = (
      action: AuditAction,
      at: number,
      keyId: string | null,
      extra: Partial<{ target: string; status: number; ua: string }> = {},
    ) =>
      record(
        t.services.db.kysely,
        { workspaceId: ws.id, keyId, ip: '192.0.2.7', userAgent: extra.ua },
        { action, status: extra.status ?? 200, ...(extra.target ? { target: extra.target } : {}) },
        at,
      );
    return { ws, admin, other, call, add };
  }

  test("events newest first with their fields and the key's current name; another workspace's are not shown", async () => {
    const w = await world();
    const stranger = await world();
    await w.add('location.create', T0 + 1000, w.admin.id, { target: 'some-id', status: 201, ua: 'curl/8' });
    await w.add('key.revoke', T0 + 2000, w.other.id, { status: 204 });
    await w.add('share.download', T0 + 3000, null, { target: 'share-id' });
    await stranger.add('copy', T0 + 4000, stranger.admin.id);
    // The key's name now, not when it acted.
    const renamed = unique('renamed');
    const patch = await t.request({
      method: 'PATCH',
      url: `/v1/tokens/${w.other.id}`,
      token: w.admin.token,
      payload: { name: renamed },
    });
    assert.equal(patch.statusCode, 204, patch.body);
    const res = await w.call('/v1/audit');
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    const ours = body.events.filter((e: { action: string }) =>
      ['location.create', 'key.revoke', 'share.download'].includes(e.action),
    );
    assert.deepEqual(
      ours.map((e: { action: string }) => e.action),
      ['share.download', 'key.revoke', 'location.create'],
    );
    assert.ok(!body.events.some((e: { action: string }) => e.action === 'copy'), 'another workspace');
    const [download, revoke, create] = ours;
    assert.deepEqual(Object.keys(download).sort(), ['action', 'at', 'id', 'ip', 'status', 'target']);
    assert.equal(download.target, 'share-id');
    assert.equal(revoke.key_id, w.other.id);
    assert.equal(revoke.key_name, renamed);
    assert.equal(revoke.status, 204);
    assert.deepEqual(create, {
      id: create.id,
      at: new Date(T0 + 1000).toISOString(),
      action: 'location.create',
      target: 'some-id',
      status: 201,
      key_id: w.admin.id,
      key_name: w.admin.name,
      ip: '192.0.2.7',
      user_agent: 'curl/8',
    });
    assert.equal(body.next_cursor, undefined);
  });

  test('?action=, ?key_id=, ?after= and ?before= filter; an unknown action or a bad time is 400', async () => {
    const w = await world();
    await w.add('copy', T0 + 1000, w.admin.id);
    await w.add('copy', T0 + 2000, w.other.id);
    await w.add('move', T0 + 3000, w.other.id);
    await w.add('copy', T0 + 4000, w.other.id);
    const actions = async (query: string) => {
      const res = await w.call(`/v1/audit?${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res
        .json()
        .events.map((e: { action: string; at: string }) => `${e.action}@${Date.parse(e.at) - T0}`);
    };
    assert.deepEqual(await actions('action=copy'), ['copy@4000', 'copy@2000', 'copy@1000']);
    assert.deepEqual(await actions(`key_id=${w.other.id}`), ['copy@4000', 'move@3000', 'copy@2000']);
    assert.deepEqual(await actions(`action=copy&key_id=${w.other.id}`), ['copy@4000', 'copy@2000']);
    const iso = (ms: number) => new Date(T0 + ms).toISOString();
    assert.deepEqual(await actions(`after=${iso(2000)}&before=${iso(4000)}`), ['move@3000', 'copy@2000']);
    for (const bad of [
      'action=nope',
      'key_id=not-a-uuid',
      'after=yesterday',
      'before=2026-13-01T00:00:00Z',
      'limit=0',
      'cursor=zzz',
    ]) {
      const res = await w.call(`/v1/audit?${bad}`);
      assert.equal(res.statusCode, 400, `${bad}: ${res.body}`);
      assert.equal(res.json().error, 400, bad);
    }
  });

  test('?limit= pages by next_cursor without gaps or repeats, ties at one time ordered by id', async () => {
    const w = await world();
    for (let i = 0; i < 7; i++) await w.add('sync', T0 + 1000 * Math.floor(i / 3), w.admin.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await w.call(`/v1/audit?action=sync&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      seen.push(...body.events.map((e: { id: string }) => e.id));
      cursor = body.next_cursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.equal(new Set(seen).size, 7);
    const all = (await w.call('/v1/audit?action=sync')).json().events.map((e: { id: string }) => e.id);
    assert.deepEqual(seen, all);
    const stamps = (await w.call('/v1/audit?action=sync'))
      .json()
      .events.map((e: { at: string; id: string }) => [e.at, e.id]);
    const sorted = [...stamps].sort((a, b) =>
      a[0] === b[0] ? (a[1] < b[1] ? 1 : -1) : a[0] < b[0] ? 1 : -1,
    );
    assert.deepEqual(stamps, sorted, 'at descending, then id descending');
  });

  test('a key without the admin scope is 403', async () => {
    const w = await world();
    const made = await t.request({
      method: 'POST',
      url: '/v1/tokens',
      token: w.admin.token,
      payload: { name: unique('r'), scopes: ['read', 'transfer', 'remove', 'share'] },
    });
    assert.equal(made.statusCode, 201, made.body);
    const res = await w.call('/v1/audit', made.json().token);
    assert.equal(res.statusCode, 403, res.body);
  });
});
