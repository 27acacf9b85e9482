// docs/api.md "Audit log", plans, through inject() on both databases: a dry run that makes a plan is
// recorded as plan.create, and a plan's run as the action it performs (remove, move, copy, sync) with
// what it acts on: a remove or move plan of a few objects names each, a larger one its given paths and
// how many objects; every record counts the entries by action and names the plan. So the record
// answers "who removed this file" after the plan is pruned. Plans are written by Plans.write from
// entries given here, as a dry run writes what it lists; the runs are requests, and nothing reaches a
// store (no worker runs; the location's endpoint is never called).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { wholeWorkspace } from '../../src/domain/caller.js';
import { AUDIT_NAMES_MAX } from '../../src/domain/plans/audit.js';
import type { PlanEntry, PlanRequest } from '../../src/lifecycle/plans.js';
import type { ObjectRef } from '../../src/lifecycle/specs.js';
import { idleWorkspace, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';

const USER_AGENT = 'audit-plans/1.0';

await eachDatabase('the audit record of plans', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database);
  });
  after(() => t.close());

  async function world() {
    const { ws, key, label, locationId } = await idleWorkspace(t);
    const caller = wholeWorkspace(ws.id);
    const audit = { workspaceId: ws.id, keyId: key.id, ip: '192.0.2.9', userAgent: USER_AGENT };
    const ref = (path: string): ObjectRef => ({ location_id: locationId, path });
    /** A plan as a dry run writes it: the request, what was given, and its entries. */
    const plan = async (request: PlanRequest, given: { from: unknown; to?: unknown }, entries: PlanEntry[]) =>
      (
        await t.services.plans.write(
          caller,
          request,
          given,
          async function* () {
            yield* entries;
          },
          10,
          audit,
        )
      ).plan_id;
    const run = async (planId: string) => {
      const res = await t.request({
        method: 'POST',
        url: `/v1/plans/${planId}/run`,
        token: key.token,
        headers: { 'user-agent': USER_AGENT },
      });
      assert.equal(res.statusCode, 202, res.body);
    };
    /** The workspace's events of `action`, newest first, as GET /v1/audit answers them. */
    const events = async (action: string) => {
      const res = await t.request({ method: 'GET', url: `/v1/audit?action=${action}`, token: key.token });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().events as Array<Record<string, unknown>>;
    };
    const removal = (paths: string[]): PlanEntry[] =>
      paths.map((path) => ({
        key: path,
        size: 5,
        etag: null,
        action: 'remove',
        work: JSON.stringify({ op: 'remove', source: ref(path) }),
      }));
    return { key, label, ref, plan, run, events, removal };
  }

  test("a remove plan's dry run is plan.create and its run is remove, naming each file", async () => {
    const w = await world();
    const files = ['bucket/rm/a.txt', 'bucket/rm/b.txt'];
    const request: PlanRequest = { kind: 'remove', spec: { kind: 'remove', paths: files.map(w.ref) } };
    const id = await w.plan(request, { from: files.map((f) => `${w.label}/${f}`) }, w.removal(files));
    const named = `${w.label}/bucket/rm/a.txt, ${w.label}/bucket/rm/b.txt`;
    const [created] = await w.events('plan.create');
    assert.deepEqual(
      { ...created, id: undefined, at: undefined },
      {
        id: undefined,
        at: undefined,
        action: 'plan.create',
        target: `remove ${named} (2 remove; plan ${id})`,
        status: 200,
        key_id: w.key.id,
        key_name: w.key.name,
        ip: '192.0.2.9',
        user_agent: USER_AGENT,
      },
    );
    assert.deepEqual(await w.events('remove'), [], 'nothing removed by the dry run');
    await w.run(id);
    const removed = await w.events('remove');
    assert.equal(removed.length, 1);
    assert.deepEqual(
      { action: removed[0]?.action, target: removed[0]?.target, status: removed[0]?.status },
      { action: 'remove', target: `${named} (2 remove; plan ${id})`, status: 202 },
    );
    assert.equal(removed[0]?.key_id, w.key.id);
    assert.deepEqual(await w.events('plan.run'), [], 'no plan.run');
    // The plan goes (expired and pruned): the record still says who removed the files.
    await t.services.db.kysely.deleteFrom('plan_entries').where('plan_id', '=', id).execute();
    await t.services.db.kysely.deleteFrom('plans').where('id', '=', id).execute();
    assert.match(String((await w.events('remove'))[0]?.target), /bucket\/rm\/b\.txt/);
  });

  test('a remove plan of more objects than are named gives its paths and how many objects', async () => {
    const w = await world();
    const files = Array.from({ length: AUDIT_NAMES_MAX + 1 }, (_, i) => `bucket/old/${i}.log`);
    const request: PlanRequest = {
      kind: 'remove',
      spec: { kind: 'remove', paths: [w.ref('bucket/old/*.log')] },
    };
    const id = await w.plan(request, { from: `${w.label}/bucket/old/*.log` }, w.removal(files));
    await w.run(id);
    const [removed] = await w.events('remove');
    assert.equal(removed?.target, `${w.label}/bucket/old/*.log (${AUDIT_NAMES_MAX + 1} remove; plan ${id})`);
  });

  test("a move plan's run is move, naming what moves and where; a copy's copy and a sync's sync, from and to", async () => {
    const w = await world();
    const moves = ['bucket/in/a.txt', 'bucket/in/b.txt'];
    const destination = { ...w.ref('bucket/moved/'), folder: true };
    const moving = await w.plan(
      { kind: 'move', spec: { kind: 'move', sources: [w.ref('bucket/in/*.txt')], destination } },
      { from: `${w.label}/bucket/in/*.txt`, to: `${w.label}/bucket/moved/` },
      moves.map((path) => ({
        key: path,
        size: 1,
        etag: null,
        action: 'move',
        work: JSON.stringify({
          op: 'move',
          source: w.ref(path),
          destination: w.ref(`bucket/moved/${path.slice(path.lastIndexOf('/') + 1)}`),
        }),
      })),
    );
    await w.run(moving);
    const [moved] = await w.events('move');
    assert.equal(
      moved?.target,
      `${w.label}/bucket/in/a.txt, ${w.label}/bucket/in/b.txt → ${w.label}/bucket/moved/ (2 move; plan ${moving})`,
    );

    const copying = await w.plan(
      {
        kind: 'copy',
        source: w.ref('bucket/in/'),
        destination: w.ref('bucket/out/'),
        overwrite: 'always',
      },
      { from: `${w.label}:bucket/in/`, to: `${w.label}:bucket/out/` },
      [{ key: 'a.txt', size: 1, etag: null, action: 'copy' }],
    );
    await w.run(copying);
    const [copied] = await w.events('copy');
    assert.equal(copied?.target, `${w.label}/bucket/in/ → ${w.label}/bucket/out/ (1 copy; plan ${copying})`);

    const syncing = await w.plan(
      {
        kind: 'sync',
        source: w.ref('bucket/in/'),
        destination: w.ref('bucket/mirror/'),
        options: { compare: 'size-modtime', delete: true, max_delete: 10 },
      },
      { from: `${w.label}:bucket/in/`, to: `${w.label}:bucket/mirror/` },
      [
        { key: 'a.txt', size: 1, etag: null, action: 'copy' },
        { key: 'b.txt', size: 1, etag: null, action: 'skip' },
        {
          key: 'gone.txt',
          size: 1,
          etag: null,
          action: 'delete',
          work: JSON.stringify({ op: 'delete', target: w.ref('bucket/mirror/gone.txt') }),
        },
      ],
    );
    const [planned] = await w.events('plan.create');
    assert.equal(
      planned?.target,
      `sync ${w.label}/bucket/in/ → ${w.label}/bucket/mirror/ (1 copy, 1 delete, 1 skip; plan ${syncing})`,
    );
    await w.run(syncing);
    const [synced] = await w.events('sync');
    assert.equal(
      synced?.target,
      `${w.label}/bucket/in/ → ${w.label}/bucket/mirror/ (1 copy, 1 delete, 1 skip; plan ${syncing})`,
    );
  });
});
