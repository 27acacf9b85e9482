// A plan shows what changes first (docs/api.md, "Plans"): its copies and deletions before the objects it
// skips, each in listing order, however late the listing finds them, on the dry run's first page and on
// every page after it, with the cursor still walking each entry once. The entries come from a listing
// of 1,205 objects given to the plan store as a sync's dry run gives them, across several write batches.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { PlanEntry } from '../../src/lifecycle/plans.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';

await eachDatabase('plan order', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database);
  });
  after(() => t?.close());

  test('changes come before skips, stably, on the first page and through every page', async () => {
    const { workspace_id } = await t.services.db.kysely
      .selectFrom('api_keys')
      .select('workspace_id')
      .executeTakeFirstOrThrow();
    const caller = { workspaceId: workspace_id, locations: null };
    // The listing as a sync's diff streams it: mostly equal objects, three copies far apart (one past
    // the first write batch of 500), then the deletions, which a sync finds last.
    const listing: PlanEntry[] = [];
    for (let i = 0; i < 1200; i++) {
      const key = `k${String(i).padStart(4, '0')}`;
      const copy = i === 1 || i === 700 || i === 1199;
      listing.push({ key, size: i, etag: null, action: copy ? 'copy' : 'skip' });
    }
    for (const key of ['gone-b', 'gone-a', 'gone-c', 'gone-d', 'gone-e'])
      listing.push({ key, size: 1, etag: null, action: 'delete' });
    const ref = { location_id: randomUUID(), path: 'bkt/p/' };
    const first = await t.services.plans.write(
      caller,
      { kind: 'sync', source: ref, destination: ref, options: { delete: true } },
      { from: 'a:bkt/p/', to: 'b:bkt/p/' },
      async function* () {
        yield* listing;
      },
      10,
      { workspaceId: workspace_id, keyId: null, ip: '127.0.0.1', userAgent: 'plan-order' },
    );
    const changes = ['k0001', 'k0700', 'k1199', 'gone-b', 'gone-a', 'gone-c', 'gone-d', 'gone-e'];
    const skips = listing.filter((e) => e.action === 'skip').map((e) => e.key);
    assert.deepEqual(first.counts, { copy: 3, skip: 1197, delete: 5 });
    assert.equal(first.total, 1205);
    assert.deepEqual(
      first.entries.map((e) => e.key),
      [...changes, ...skips.slice(0, 2)],
      'the dry run answers what changes first',
    );
    assert.deepEqual(
      first.entries.map((e) => e.action),
      ['copy', 'copy', 'copy', 'delete', 'delete', 'delete', 'delete', 'delete', 'skip', 'skip'],
    );

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      // Small pages across the changes and the first skips (a page ends between the two), then large.
      const limit = seen.length < 12 ? 3 : 500;
      const url = `/v1/plans/${first.plan_id}?limit=${limit}${cursor === undefined ? '' : `&cursor=${cursor}`}`;
      const res = await t.request({ method: 'GET', url });
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json() as { entries: { key: string }[]; next_cursor?: string };
      seen.push(...page.entries.map((e) => e.key));
      cursor = page.next_cursor;
    } while (cursor !== undefined);
    assert.deepEqual(seen, [...changes, ...skips], 'every entry once, in that order');
  });
});
