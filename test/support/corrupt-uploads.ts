// Issue 37, "Every byte proven", through the real engine: a provider fake flips one byte of the first
// upload of one object (FakeServer.corruptWhen, as a proxy changing a byte on the way would), under a
// bulk job to that provider. The write must fail (the store's check or the provider's own refusal of
// a declared hash), the engine must try it again, and the job must end complete with every byte
// right: never complete with the wrong bytes. The routes are those of the store fault table
// (./store-faults.ts), whose `data` and `pathOf` name the upload requests of an object.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FakeServer } from '../fakes/server.js';
import type { TestApp } from './app.js';
import { OBJECTS, type Route } from './store-faults.js';
import { waitFor } from './transfers.js';

/** The object whose first upload is changed on the way. */
const CORRUPTED = 'a.bin';

export function corruptedUploadCases(
  app: () => TestApp,
  routes: Array<{ route: Route; server: () => FakeServer }>,
): void {
  for (const { route, server } of routes) {
    test(`${route.name}: a byte changed in an upload fails that attempt, and the retry lands the right bytes`, async () => {
      const objects = OBJECTS();
      const { call, from, to } = await route.setup(objects);
      const before = server().corrupted;
      server().corruptWhen((r) => {
        const seen = { ...r, copySource: false, answered: false, acceptedBytes: 0 };
        return route.data(seen) && (route.pathOf(seen)?.endsWith(`/${CORRUPTED}`) ?? false);
      });
      const keys = Object.keys(objects);
      const res = await call({ method: 'POST', url: '/v1/copy', payload: { from, to, manifest: keys } });
      assert.equal(res.statusCode, 202, res.body);
      const jobId = res.json().job_id as string;
      const job = await waitFor(call, `/v1/jobs/${jobId}`);
      assert.equal(job.status, 'complete', JSON.stringify(job));
      for (const key of keys) {
        const held = await route.read(key);
        assert.ok(held?.equals(objects[key] as Buffer), `${key}: the destination holds the source's bytes`);
      }
      assert.equal(server().corrupted - before, 1, 'the fake changed a byte of one upload');
      // At least one attempt more than the clean run's one: the changed upload failed. (More on a
      // loaded machine, where the fault table's 1 s outbound bounds can fail another.)
      const rows = await app()
        .services.db.kysely.selectFrom('job_objects')
        .select(['key', 'attempts'])
        .where('job_id', '=', jobId)
        .execute();
      const attempts = rows.find((r) => r.key === CORRUPTED)?.attempts ?? 0;
      assert.ok(
        attempts >= 2,
        `the changed upload failed its attempt and was tried again: ${JSON.stringify(rows)}`,
      );
    });
  }
}
