// The worker's store cache on both databases: one store per location shared by its operations; a
// rename, a refresh request or a refreshed token reopens nothing; a replaced secret serves the next
// operation from a new store, and the old one closes when its last operation ends.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LocationRow } from '../../src/db/schema.js';
import type { Storage } from '../../src/domain/storage.js';
import { StoreCache } from '../../src/engine/store-cache.js';
import type { Store } from '../../src/stores/contract.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, secretFor, unique } from '../support/fixtures.js';

await eachDatabase('store cache', (database) => {
  const clock = new ManualClock();
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database, { clock });
  });
  after(() => t.close());

  /** The app's Storage, counting the stores it opens and closes. */
  function counting(): { storage: Storage; opened: Store[]; closed: Store[] } {
    const opened: Store[] = [];
    const closed: Store[] = [];
    const storage = {
      open(row: LocationRow): Store {
        const inner = t.services.storage.open(row);
        const store: Store = {
          ...inner,
          close: async () => {
            closed.push(store);
            await inner.close();
          },
        };
        opened.push(store);
        return store;
      },
    } as unknown as Storage;
    return { storage, opened, closed };
  }

  const call = async (method: 'PATCH' | 'PUT' | 'POST', url: string, payload: Record<string, unknown>) => {
    const res = await t.request({ method, url, payload });
    assert.ok(res.statusCode < 300, res.body);
  };

  test('renames, refresh requests and refreshed tokens reopen nothing; a new secret opens a new store and the old closes after its last user', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/v1/locations',
      payload: { provider: 'dropbox', label: unique('dbx'), secret: secretFor('dropbox') },
    });
    const id = res.json().id;
    const { storage, opened, closed } = counting();
    const cache = new StoreCache(t.services.db.kysely, storage, clock);
    const first = await cache.acquire(id);

    await call('PATCH', '/v1/locations', { id, label: unique('renamed') });
    await call('POST', '/v1/locations/refresh', { id });
    // What the refresher writes: a new sealed token and expiry, nothing else.
    await t.services.db.kysely
      .updateTable('locations')
      .set({
        secret_envelope: t.services.keyring.seal(JSON.stringify(secretFor('dropbox')), id),
        access_token_expires_at: clock.now() + 3600_000,
      })
      .where('id', '=', id)
      .execute();
    clock.advance(5000);
    const second = await cache.acquire(id);
    assert.equal(second.store, first.store, 'the same store');
    assert.equal(opened.length, 1);

    await call('PUT', '/v1/locations', { id, secret: secretFor('dropbox') });
    clock.advance(5000);
    const third = await cache.acquire(id);
    assert.notEqual(third.store, first.store, 'a new secret: a new store for the next operation');
    assert.equal(opened.length, 2);
    assert.equal(closed.length, 0, 'the old store is still in use');
    first.release();
    assert.equal(closed.length, 0, 'one user left');
    second.release();
    assert.deepEqual(closed, [first.store], 'closed when its last user was done');
    third.release();
    assert.equal(closed.length, 1, 'the current store stays open between operations');
    await cache.close();
    assert.deepEqual(closed, [first.store, third.store]);
  });
});
