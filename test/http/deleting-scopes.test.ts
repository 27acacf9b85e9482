// docs/api.md "Scopes", "Deleting needs remove", through inject() on both databases: a sync with
// `delete: true`, the run of a plan of one, a schedule given such a sync (created or changed) and a
// run now of it need `remove` as well as `transfer`; a key with `transfer` alone is 403 naming
// `remove`, and gets the same request without `delete` through. Nothing here reaches a store: the
// location's endpoint is never called (the checks come before any listing, and no worker runs), and
// the sync plan is written by Plans.write from entries given here, as a dry run writes what it lists.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Scope } from '../../src/api/scopes.js';
import { wholeWorkspace } from '../../src/domain/caller.js';
import { idleWorkspace, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';

await eachDatabase('a sync that deletes needs remove', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database);
  });
  after(() => t.close());

  /** A workspace with an s3 location (never called) and keys of chosen scopes. */
  async function world() {
    const { ws, key, label, locationId } = await idleWorkspace(t, ['read', 'transfer', 'remove', 'admin']);
    const admin = key.token;
    const keyWith = async (scopes: readonly Scope[]) =>
      (await t.services.apiKeys.create(ws.id, { name: unique('k'), scopes })).token;
    const transferOnly = await keyWith(['read', 'transfer']);
    const both = await keyWith(['read', 'transfer', 'remove']);
    const call = (token: string, options: InjectOptions) => t.request({ ...options, token });
    const sync = (extra: Record<string, unknown> = {}) => ({
      from: `${label}:bucket/in/`,
      to: `${label}:bucket/${unique('out')}/`,
      ...extra,
    });
    return { ws, locationId, label, admin, transferOnly, both, call, sync };
  }

  function refusedForRemove(res: LightMyRequestResponse, what: string): void {
    assert.equal(res.statusCode, 403, `${what}: ${res.body}`);
    assert.match(res.json().message, /lacks the "remove" scope/, what);
  }

  test('POST /v1/sync with delete: true needs remove as well as transfer; without delete, transfer alone', async () => {
    const w = await world();
    const post = (token: string, payload: Record<string, unknown>) =>
      w.call(token, { method: 'POST', url: '/v1/sync', payload });
    refusedForRemove(await post(w.transferOnly, w.sync({ delete: true })), 'transfer alone');
    refusedForRemove(
      await post(w.transferOnly, w.sync({ delete: true, max_delete: 5 })),
      'transfer alone, with a cap',
    );
    const deleting = await post(w.both, w.sync({ delete: true }));
    assert.equal(deleting.statusCode, 202, deleting.body);
    const copying = await post(w.transferOnly, w.sync({ delete: false }));
    assert.equal(copying.statusCode, 202, copying.body);
    assert.equal((await post(w.transferOnly, w.sync())).statusCode, 202);
    // A key with remove alone is refused for the transfer it lacks.
    const removeOnly = await t.services.apiKeys.create(w.ws.id, { name: unique('k'), scopes: ['remove'] });
    const lacking = await post(removeOnly.token, w.sync({ delete: true }));
    assert.equal(lacking.statusCode, 403, lacking.body);
    assert.match(lacking.json().message, /lacks the "transfer" scope/);
  });

  test("a sync plan's run needs remove when the sync deletes; a plan of a sync that does not, transfer alone", async () => {
    const w = await world();
    const caller = wholeWorkspace(w.ws.id);
    const audit = { workspaceId: w.ws.id, keyId: null, ip: '127.0.0.1', userAgent: undefined };
    /** A sync plan as its dry run writes it: one object to copy and, deleting, one to delete. */
    const plan = async (deletes: boolean) => {
      const body = w.sync(deletes ? { delete: true } : {}) as { from: string; to: string };
      const checked = await t.services.copies.checkSync(caller, body);
      const source = { location_id: checked.source.id, path: checked.from };
      const destination = { location_id: checked.destination.id, path: checked.to };
      const entries = async function* () {
        yield { key: 'a.txt', size: 1, etag: null, action: 'copy' };
        if (deletes) {
          const target = { location_id: destination.location_id, path: `${checked.to}old.txt` };
          const work = JSON.stringify({ op: 'delete', target });
          yield { key: 'old.txt', size: 1, etag: null, action: 'delete', work };
        }
      };
      const request = { kind: 'sync' as const, source, destination, options: checked.options };
      const made = await t.services.plans.write(caller, request, body, entries, 10, audit);
      return made.plan_id;
    };
    const run = (token: string, id: string) => w.call(token, { method: 'POST', url: `/v1/plans/${id}/run` });
    const deleting = await plan(true);
    refusedForRemove(await run(w.transferOnly, deleting), "a deleting sync plan's run with transfer alone");
    const ran = await run(w.both, deleting);
    assert.equal(ran.statusCode, 202, ran.body);
    const copying = await plan(false);
    const copied = await run(w.transferOnly, copying);
    assert.equal(copied.statusCode, 202, copied.body);
  });

  test('a schedule of a sync that deletes needs remove to be created, given that action, or run now; not to be paused', async () => {
    const w = await world();
    const schedule = (action: Record<string, unknown>) => ({
      name: unique('s'),
      every: 'every day at 02:00',
      action: { sync: action },
    });
    const create = (token: string, action: Record<string, unknown>) =>
      w.call(token, { method: 'POST', url: '/v1/schedules', payload: schedule(action) });
    refusedForRemove(await create(w.transferOnly, w.sync({ delete: true })), 'create with transfer alone');
    const mirror = await create(w.both, w.sync({ delete: true }));
    assert.equal(mirror.statusCode, 201, mirror.body);
    const copying = await create(w.transferOnly, w.sync());
    assert.equal(copying.statusCode, 201, copying.body);
    const patch = (token: string, id: string, payload: Record<string, unknown>) =>
      w.call(token, { method: 'PATCH', url: `/v1/schedules/${id}`, payload });
    refusedForRemove(
      await patch(w.transferOnly, copying.json().id, { action: { sync: w.sync({ delete: true }) } }),
      'a change to a deleting action with transfer alone',
    );
    const paused = await patch(w.transferOnly, mirror.json().id, { paused: true });
    assert.equal(paused.statusCode, 200, paused.body);
    const runNow = (token: string, id: string) =>
      w.call(token, { method: 'POST', url: `/v1/schedules/${id}/run` });
    refusedForRemove(await runNow(w.transferOnly, mirror.json().id), 'a run now with transfer alone');
    const started = await runNow(w.both, mirror.json().id);
    assert.equal(started.statusCode, 202, started.body);
    const other = await runNow(w.transferOnly, copying.json().id);
    assert.equal(other.statusCode, 202, other.body);
    const changed = await patch(w.both, copying.json().id, { action: { sync: w.sync({ delete: true }) } });
    assert.equal(changed.statusCode, 200, changed.body);
    // An unknown schedule is 404 to a key with transfer alone, as before: nothing is learnt.
    const unknown = await runNow(w.transferOnly, crypto.randomUUID());
    assert.equal(unknown.statusCode, 404, unknown.body);
  });
});
