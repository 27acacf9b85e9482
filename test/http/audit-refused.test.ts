// docs/api.md "Audit log": an API request refused for its key (missing, not valid, revoked, expired)
// records auth.refused with its address and user agent, and, for a key that exists (revoked, expired),
// that key in its workspace, where GET /v1/audit shows it; at most one per
// address per second, so a flood of bad requests writes a bounded number of rows. Both databases.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { wholeWorkspace } from '../../src/domain/caller.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { ADDRESSES_PER_SECOND } from '../../src/http/refused-auth.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { waitUntil } from '../support/wait.js';

await eachDatabase('refused authentications in the audit log', (database) => {
  let t: TestApp;
  const clock = new ManualClock();
  before(async () => {
    t = await startTestApp(database, { clock });
  });
  after(() => t.close());

  let n = 0;
  /** An address of its own for each test (TEST-NET-2). */
  const address = () => `198.51.100.${++n}`;

  /** The refusals recorded from `ip`, once `count` are there (they are written after the answer). */
  async function refusals(ip: string, count: number) {
    let seen = 0;
    return waitUntil(
      async () => {
        const rows = await t.services.db.kysely
          .selectFrom('audit_events')
          .selectAll()
          .where('ip', '=', ip)
          .orderBy('at')
          .execute();
        seen = rows.length;
        return rows.length >= count ? rows : undefined;
      },
      { what: `${count} refusals from ${ip}`, detail: () => `${seen} recorded` },
    );
  }

  test('a missing, invalid, revoked or expired key records auth.refused: status 401, the address and user agent; a known key in its workspace', async () => {
    const ws = await ensureWorkspace(t.services.db.kysely, unique('ws'), clock);
    const revoked = await t.services.apiKeys.create(ws.id, { name: unique('gone') });
    await t.services.apiKeys.revoke(wholeWorkspace(ws.id), revoked.id);
    const expiring = await t.services.apiKeys.create(ws.id, {
      name: unique('old'),
      expiresAt: clock.now() + 1000,
    });
    clock.advance(2000);
    const ip = address();
    const asks: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer fry_not-a-key' },
      { authorization: `Bearer ${revoked.token}` },
      { authorization: `Bearer ${expiring.token}` },
    ];
    for (const headers of asks) {
      clock.advance(1000);
      const res = await t.app.inject({
        method: 'GET',
        url: '/v1/locations',
        remoteAddress: ip,
        headers: { ...headers, 'user-agent': 'probe/1.0' },
      });
      assert.equal(res.statusCode, 401, JSON.stringify(headers));
    }
    // A POST and an unknown path are refused the same way.
    clock.advance(1000);
    await t.app.inject({ method: 'POST', url: '/v1/copy', remoteAddress: ip, payload: {} });
    clock.advance(1000);
    await t.app.inject({ method: 'GET', url: '/v1/nothing-here', remoteAddress: ip });
    const rows = await refusals(ip, 6);
    assert.equal(rows.length, 6);
    for (const row of rows) {
      assert.equal(row.action, 'auth.refused');
      assert.equal(Number(row.status), 401);
      assert.equal(row.target, null);
    }
    // The missing and the unknown token name no workspace; the revoked and the expired key are theirs.
    assert.deepEqual(
      rows.map((r) => [r.workspace_id, r.key_id]),
      [
        [null, null],
        [null, null],
        [ws.id, revoked.id],
        [ws.id, expiring.id],
        [null, null],
        [null, null],
      ],
    );
    const admin = await t.services.apiKeys.create(ws.id, { name: unique('admin') });
    const seen = await t.request({ method: 'GET', url: '/v1/audit?action=auth.refused', token: admin.token });
    assert.deepEqual(
      (seen.json().events as Array<{ key_id?: string; key_name?: string; ip: string }>).map((e) => [
        e.key_id,
        e.ip,
      ]),
      [
        [expiring.id, ip],
        [revoked.id, ip],
      ],
      seen.body,
    );
    assert.deepEqual(
      rows.slice(0, 4).map((r) => r.user_agent),
      ['probe/1.0', 'probe/1.0', 'probe/1.0', 'probe/1.0'],
    );
    const text = JSON.stringify(rows);
    assert.ok(!text.includes(revoked.token) && !text.includes('fry_not-a-key'), 'never the key');
  });

  test('a flood from one address records one refusal a second; an accepted request or a share link records none', async () => {
    const ip = address();
    clock.advance(5000);
    await Promise.all(
      Array.from({ length: 60 }, () =>
        t.app.inject({
          method: 'GET',
          url: '/v1/locations',
          remoteAddress: ip,
          headers: { authorization: 'Bearer x' },
        }),
      ),
    );
    clock.advance(1000);
    for (let i = 0; i < 20; i++) {
      await t.app.inject({ method: 'GET', url: '/v1/transfers', remoteAddress: ip });
    }
    // Another address in the same second still has its own.
    const other = address();
    await t.app.inject({ method: 'GET', url: '/v1/transfers', remoteAddress: other });
    assert.equal((await refusals(ip, 2)).length, 2);
    // No more arrive: a refusal a second later, written after any the flood could have left in flight,
    // is the third and last.
    clock.advance(1000);
    await t.app.inject({ method: 'GET', url: '/v1/transfers', remoteAddress: ip });
    assert.equal((await refusals(ip, 3)).length, 3, 'no more arrive');
    assert.equal((await refusals(other, 1)).length, 1);

    const fine = address();
    const ok = await t.app.inject({
      method: 'GET',
      url: '/v1/locations',
      remoteAddress: fine,
      headers: { authorization: `Bearer ${t.token}` },
    });
    assert.equal(ok.statusCode, 200);
    const link = await t.app.inject({ method: 'GET', url: '/s/not-a-token', remoteAddress: fine });
    assert.equal(link.statusCode, 404);
    // Then one refusal from that address, written after anything the two above could have left in flight:
    // it is the only row.
    clock.advance(1000);
    await t.app.inject({ method: 'GET', url: '/v1/transfers', remoteAddress: fine });
    assert.equal((await refusals(fine, 1)).length, 1);
    assert.ok(ADDRESSES_PER_SECOND >= 100, 'many addresses a second are still recorded');
  });
});
