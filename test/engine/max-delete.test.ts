// A sync's default delete cap (docs/api.md, "Sync"), as a unit: half the objects the destination holds,
// at most 1000, so that a mistyped destination stops the sync before anything changes; past the cap the
// diff ends with an error that names max_delete and the value that would pass. The listings come from a
// bucket held in memory (the provider's side only: listing is all a sync's diff asks of a store).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OpenStore } from '../../src/engine/planned.js';
import { type SyncPlanned, syncObjects } from '../../src/engine/sync-plan.js';
import { isFerryError } from '../../src/errors.js';
import type { JobOptions } from '../../src/lifecycle/specs.js';
import type { Entry, Store } from '../../src/stores/contract.js';

/** A bucket in memory: its keys, listed as an S3 listing would (an empty prefix lists nothing). */
function bucket(keys: string[]): Store {
  const unsupported = () => {
    throw new Error('a sync diff only lists');
  };
  const store: Store = {
    provider: 's3',
    account: 'memory',
    features: {
      bucketListing: true,
      hashes: [],
      upload: { minPartSize: 1, maxPartSize: 1, maxParts: 1, singleRequestMax: 1 },
    },
    async *list(path: string): AsyncIterable<Entry> {
      const prefix = `${path}/`;
      for (const key of keys.filter((k) => k.startsWith(prefix)))
        yield { name: key.slice(key.lastIndexOf('/') + 1), path: key, size: 1, isDir: false };
    },
    stat: unsupported,
    read: unsupported,
    write: unsupported,
    delete: unsupported,
    close: async () => {},
  };
  return store;
}

const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}.txt`);

/** The diff of a sync from src/ to dst/ with delete, as far as it goes, and how it ended. */
async function diff(source: string[], destination: string[], options: JobOptions = {}) {
  const stores: Record<string, Store> = { a: bucket(source), b: bucket(destination) };
  const open: OpenStore = async (id) => ({ store: stores[id] as Store, release: () => {} });
  const planned: SyncPlanned[] = [];
  let error: unknown;
  try {
    for await (const p of syncObjects(open, {
      source: { location_id: 'a', path: 'bkt/src/' },
      destination: { location_id: 'b', path: 'bkt/dst/' },
      options: { delete: true, ...options },
    }))
      planned.push(p);
  } catch (err) {
    error = err;
  }
  return { deletions: planned.filter((p) => p.work !== undefined).length, error };
}

test('without max_delete a sync removes at most half of what the destination holds', async () => {
  // A mistyped destination: 853 objects, none of them in the source. The old default (1000) let them go.
  const wrong = await diff(names('bkt/src/new-', 5), names('bkt/dst/old-', 853));
  assert.equal(wrong.deletions, 0, 'no deletion planned');
  assert.ok(isFerryError(wrong.error, 'conflict'), String(wrong.error));
  assert.equal(
    (wrong.error as Error).message,
    "the sync would remove 853 of the 853 objects at the destination, more than max_delete (426: by default half the destination's objects, at most 1000); " +
      "nothing was copied or removed. If that is intended, give max_delete: 853 or more (on the sync, or in the schedule's action); the same sync retried stops here again",
  );
  // Half goes through: 2 of 4, and 1 of 3 (half of 3 rounds down).
  const half = await diff(names('bkt/src/k', 2), names('bkt/dst/k', 4));
  assert.equal(half.error, undefined, String(half.error));
  assert.equal(half.deletions, 2);
  assert.ok(isFerryError((await diff([], names('bkt/dst/k', 3))).error, 'conflict'), '3 of 3');
  assert.equal((await diff(names('bkt/src/k', 2), names('bkt/dst/k', 3))).deletions, 1);
  // A destination holding one object cannot lose it without max_delete.
  assert.ok(isFerryError((await diff(names('bkt/src/a', 1), ['bkt/dst/only.txt'])).error, 'conflict'));
});

test('the default never passes 1000, however large the destination', async () => {
  const keep = names('bkt/x/k', 1500);
  const dst = (n: number) => [
    ...keep.map((k) => k.replace('bkt/x/', 'bkt/dst/')),
    ...names('bkt/dst/gone-', n),
  ];
  const src = keep.map((k) => k.replace('bkt/x/', 'bkt/src/'));
  const within = await diff(src, dst(1000));
  assert.equal(within.error, undefined, String(within.error));
  assert.equal(within.deletions, 1000);
  const past = await diff(src, dst(1001));
  assert.equal(past.deletions, 0);
  assert.match(
    String((past.error as Error).message),
    /would remove 1001 of the 2501 objects .*\(1000: by default/,
  );
});

test('a max_delete given is the cap, above half or below it, and named as given', async () => {
  const all = await diff([], names('bkt/dst/k', 10), { max_delete: 10 });
  assert.equal(all.error, undefined, String(all.error));
  assert.equal(all.deletions, 10);
  const low = await diff(names('bkt/src/k', 9), names('bkt/dst/k', 10), { max_delete: 0 });
  assert.match(
    String((low.error as Error).message),
    /^the sync would remove 1 of the 10 objects at the destination, more than max_delete \(0\); .*give max_delete: 1 or more/,
  );
});
