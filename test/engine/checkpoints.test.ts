// The checkpoints of streamed copies (src/engine/checkpoints.ts): the upload and its parts are
// recorded only by the holder of the lease on the work, a worker that takes the work over takes the
// checkpoint over, and from then on the worker that lost the lease can neither add parts nor abandon
// the upload.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { abandonUpload, checkpointOf, type Work } from '../../src/engine/checkpoints.js';
import { keyHash, plan } from '../../src/lifecycle/object-planning.js';
import * as objects from '../../src/lifecycle/objects.js';
import { DEFAULT_CRASH_POLICY } from '../../src/queue/backoff.js';
import { JOB_OBJECTS } from '../../src/queue/leased.js';
import { reclaimExpired } from '../../src/queue/leases.js';
import type { Lease } from '../../src/queue/moves.js';
import type { ResumableUpload, Store } from '../../src/stores/contract.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';
import { bareJob } from '../support/jobs.js';

await eachDatabase('copy checkpoints', (database) => {
  let t: TestApp;
  let db: Db;
  const clock = new ManualClock(Date.UTC(2026, 10, 25, 9));
  const lease = (owner: string): Lease => ({ owner, now: clock.now(), until: clock.now() + 10_000 });

  before(async () => {
    t = await startTestApp(database, { clock });
    db = t.services.db;
  });
  after(() => t?.close());

  /** A job with one object, claimed by `owner`. */
  async function claimedObject(owner: string): Promise<Work & { kind: 'object' }> {
    const { jobId: job_id } = await bareJob(db, clock, 'checkpoints');
    await plan(db.kysely, job_id, 0, [{ key: 'k', keyHash: keyHash('k'), size: 100, etag: '"e"' }]);
    const [row] = await objects.claim(db.kysely, db.dialect, lease(owner), job_id, 1);
    assert.ok(row);
    return { kind: 'object', jobId: job_id, seq: row.seq };
  }

  const upload: ResumableUpload = { uploadId: 'u-1', partSize: 10 };
  const record = { destinationPath: 'b/dst/k', sourceEtag: '"e"', size: 100, upload };

  test('the lease holder records an upload and its parts, and reads them back in order', async () => {
    const work = await claimedObject('w1');
    const mine = checkpointOf(db.kysely, work, 'w1', () => clock.now());
    await mine.start(record);
    await mine.part({ index: 1, tag: 'b', size: 10 });
    await mine.part({ index: 0, tag: 'a', size: 10 });
    await mine.part({ index: 1, tag: 'b2', size: 10 });
    assert.deepEqual(await mine.load(), {
      ...record,
      parts: [
        { index: 0, tag: 'a', size: 10 },
        { index: 1, tag: 'b2', size: 10 },
      ],
    });
    await mine.clear();
    assert.equal(await mine.load(), undefined);
  });

  test('a worker without the lease can neither start nor add parts', async () => {
    const work = await claimedObject('w1');
    const other = checkpointOf(db.kysely, work, 'w2', () => clock.now());
    await assert.rejects(other.start(record), /lease was lost/);
    await checkpointOf(db.kysely, work, 'w1', () => clock.now()).start(record);
    await assert.rejects(other.part({ index: 0, tag: 'a', size: 10 }), /lease was lost/);
    assert.equal(await other.load(), undefined);
  });

  test('after a reclaim the new lease holder takes the checkpoint over; the stale worker writes nothing and aborts nothing', async () => {
    const work = await claimedObject('w1');
    const stale = checkpointOf(db.kysely, work, 'w1', () => clock.now());
    await stale.start(record);
    await stale.part({ index: 0, tag: 'a', size: 10 });
    clock.advance(20_000);
    assert.ok((await reclaimExpired(db.kysely, JOB_OBJECTS, clock.now(), DEFAULT_CRASH_POLICY)) >= 1);
    const [again] = await objects.claim(db.kysely, db.dialect, lease('w2'), work.jobId, 1);
    assert.equal(again?.seq, work.seq);
    const fresh = checkpointOf(db.kysely, work, 'w2', () => clock.now());
    const loaded = await fresh.load();
    assert.deepEqual(loaded?.parts, [{ index: 0, tag: 'a', size: 10 }]);
    await assert.rejects(stale.part({ index: 1, tag: 'x', size: 10 }), /lease was lost/);
    const aborted: string[] = [];
    const store = {
      features: {
        resumable: { abort: async (_p: string, u: ResumableUpload) => void aborted.push(u.uploadId) },
      },
    } as unknown as Store;
    await abandonUpload(db.kysely, work, 'w1', store, 'lease');
    await abandonUpload(db.kysely, work, 'w1', store, 'checkpoint');
    assert.deepEqual(aborted, [], 'the stale worker abandoned nothing');
    await fresh.part({ index: 1, tag: 'b', size: 10 });
    await abandonUpload(db.kysely, work, 'w2', store, 'lease');
    assert.deepEqual(aborted, ['u-1']);
    assert.equal(await fresh.load(), undefined);
  });
});
