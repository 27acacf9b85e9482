// The authentication cache (docs/engine.md, "Authentication cache") between two instances on one
// database, each with its own connections and its own cache, on both databases: B answers from its
// cache, and a key revoked or expired, or a location added, through A is seen by B's very next
// request, every time. On PostgreSQL, while B's listening connection is down nothing is answered from
// its cache, even for a change no trigger reported; a read that B starts before its barrier has
// answered sends nothing if the key turns out revoked; a write never starts before it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import pg from 'pg';
import * as jobs from '../../src/lifecycle/jobs.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { deferred } from '../support/deferred.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { waitUntil } from '../support/wait.js';

const ROUNDS = 20;

await eachDatabase('authentication cache across instances', (database) => {
  let a: TestApp;
  let b: TestApp;
  const bName = unique('ferry-b').replace(/[^a-z0-9-]/gi, '');
  before(async () => {
    a = await startTestApp(database);
    const url = a.config.databaseUrl?.reveal();
    const named = url ? `${url}${url.includes('?') ? '&' : '?'}application_name=${bName}` : undefined;
    b = await startTestApp(database, {
      shareWith: a,
      ...(named ? { env: { FERRY_DATABASE_URL: named } } : {}),
    });
    // B caches once it listens (on PostgreSQL its listening connection opens as it starts).
    await waitUntil(() => b.services.signals.generation() !== undefined, { what: 'B to listen' });
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  const newKey = async () => {
    const res = await a.request({ method: 'POST', url: '/v1/tokens', payload: { name: unique('key') } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: string; token: string };
  };
  const listOnB = (token: string) => b.request({ method: 'GET', url: '/v1/locations', token });
  /** B's authentications answered from its cache, as its /metrics says. */
  const cacheHits = async () => {
    const text = (await b.request({ method: 'GET', url: '/metrics', token: null })).body;
    const line = text.split('\n').find((l) => l.startsWith('ferry_auth_lookups_total{from="cache"}'));
    return Number(line?.split(' ')[1] ?? Number.NaN);
  };
  /** Two requests through B, so the second is answered from its cache; asserts that it was. */
  const warm = async (token: string) => {
    assert.equal((await listOnB(token)).statusCode, 200);
    const hits = await cacheHits();
    assert.equal((await listOnB(token)).statusCode, 200);
    assert.equal(await cacheHits(), hits + 1, 'the second request was answered from the cache');
  };

  test(`a key revoked through A gets 401 from B on B's next request (${ROUNDS} rounds, B's cache warm)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key = await newKey();
      await warm(key.token);
      assert.equal((await a.request({ method: 'DELETE', url: `/v1/tokens/${key.id}` })).statusCode, 204);
      assert.equal((await listOnB(key.token)).statusCode, 401, `round ${round}`);
    }
  });

  test("a key expired through A gets 401 from B on B's next request (B's cache warm)", async () => {
    for (let round = 0; round < ROUNDS / 2; round++) {
      const key = await newKey();
      await warm(key.token);
      const past = new Date(Date.now() - 1000).toISOString();
      const res = await a.request({
        method: 'PATCH',
        url: `/v1/tokens/${key.id}`,
        payload: { expires_at: past },
      });
      assert.equal(res.statusCode, 204);
      assert.equal((await listOnB(key.token)).statusCode, 401, `round ${round}`);
    }
  });

  test("a location created through A is in B's next list (B's list and key cached)", async () => {
    const key = await newKey();
    for (let round = 0; round < ROUNDS / 2; round++) {
      await warm(key.token);
      const label = unique('loc');
      const created = await a.request({
        method: 'POST',
        url: '/v1/locations',
        token: key.token,
        payload: { provider: 's3', label, secret: { access_key_id: 'AK', secret_access_key: 'SK' } },
      });
      assert.equal(created.statusCode, 201, created.body);
      const labels = (listOnB(key.token).then((r) => r.json()) as Promise<Array<{ label: string }>>).then(
        (l) => l.map((x) => x.label),
      );
      assert.ok((await labels).includes(label), `round ${round}`);
    }
  });

  /** B's barriers wait until `release()`; `entered` resolves when the first one is asked for. */
  const holdBarriers = () => {
    const signals = b.services.signals;
    const real = signals.barrier;
    const entered = deferred();
    const gate = deferred();
    signals.barrier = () => {
      entered.resolve();
      return gate.promise.then(() => real.call(signals));
    };
    return {
      entered: entered.promise,
      release: () => {
        signals.barrier = real;
        gate.resolve();
      },
    };
  };
  /** A job (never run: no worker) in the workspace of a key. */
  const jobOf = async (keyId: string) => {
    const db = a.services.db.kysely;
    const { workspace_id } = await db
      .selectFrom('api_keys')
      .select('workspace_id')
      .where('id', '=', keyId)
      .executeTakeFirstOrThrow();
    const ref = JSON.stringify({ location_id: randomUUID(), path: 'b/p/' });
    const job = { id: randomUUID(), workspaceId: workspace_id, source: ref, destination: ref };
    return (await jobs.create(db, { ...job, overwrite: 'always', manifest: undefined }, Date.now())).job_id;
  };

  test('a key revoked through A while its write waits at B changes nothing', {
    timeout: 60_000,
  }, async () => {
    const key = await newKey();
    await warm(key.token);
    const label = unique('loc');
    // On PostgreSQL the write waits for B's barrier, held until the key is revoked; on SQLite the
    // barrier is the write itself, so the revoke simply comes first.
    const hold = database.name === 'postgres' ? holdBarriers() : undefined;
    try {
      const create = () =>
        b.request({
          method: 'POST',
          url: '/v1/locations',
          token: key.token,
          payload: { provider: 's3', label, secret: { access_key_id: 'AK', secret_access_key: 'SK' } },
        });
      const pending = hold ? create() : undefined;
      await hold?.entered;
      assert.equal((await a.request({ method: 'DELETE', url: `/v1/tokens/${key.id}` })).statusCode, 204);
      hold?.release();
      const res = await (pending ?? create());
      assert.equal(res.statusCode, 401, res.body);
    } finally {
      hold?.release();
    }
    const labels = (
      (await a.request({ method: 'GET', url: '/v1/locations' })).json() as Array<{ label: string }>
    ).map((l) => l.label);
    assert.ok(!labels.includes(label), 'the location was not created');
  });

  if (database.name === 'postgres') {
    test('a read B starts before its barrier answers sends nothing for a key revoked through A meanwhile', {
      timeout: 60_000,
    }, async () => {
      const views = b.services.transferViews;
      const job = views.job;
      try {
        for (const method of ['GET', 'HEAD'] as const) {
          const key = await newKey();
          await warm(key.token);
          const jobId = await jobOf(key.id);
          // The handler's read, seen as it starts.
          const read = deferred();
          views.job = (...args) => {
            read.resolve();
            return job.apply(views, args);
          };
          const get = () => b.request({ method, url: `/v1/jobs/${jobId}`, token: key.token });

          // Confirmed: the answer, and one more authentication answered from the cache.
          let hits = await cacheHits();
          let hold = holdBarriers();
          let pending = get();
          await Promise.all([hold.entered, read.promise]);
          hold.release();
          const ok = await pending;
          assert.equal(ok.statusCode, 200, ok.body);
          if (method === 'GET') assert.equal((ok.json() as { job_id: string }).job_id, jobId);
          assert.equal(await cacheHits(), hits + 1);

          // Revoked while the handler ran and the barrier had not answered: 401, none of the job.
          hits = await cacheHits();
          const again = deferred();
          views.job = (...args) => {
            again.resolve();
            return job.apply(views, args);
          };
          hold = holdBarriers();
          pending = get();
          try {
            await Promise.all([hold.entered, again.promise]);
            const revoked = await a.request({ method: 'DELETE', url: `/v1/tokens/${key.id}` });
            assert.equal(revoked.statusCode, 204);
          } finally {
            hold.release();
          }
          const res = await pending;
          assert.equal(res.statusCode, 401, res.body);
          assert.equal(res.headers['www-authenticate'], 'Bearer');
          if (method === 'GET') {
            assert.deepEqual(res.json(), { error: 401, message: 'the API key has been revoked' });
          } else assert.equal(res.body, '');
          assert.ok(!res.body.includes(jobId));
          assert.equal(await cacheHits(), hits, 'the revoked key was not answered from the cache');
        }
      } finally {
        views.job = job;
      }
    });

    test("while B's listening connection is down, B answers nothing from its cache", async () => {
      const key = await newKey();
      await warm(key.token);
      const admin = new pg.Client({ connectionString: a.config.databaseUrl?.reveal() });
      await admin.connect();
      try {
        const before = b.services.signals.generation();
        assert.notEqual(before, undefined);
        // B's listening connection: the one of B's whose last statement was a LISTEN or the barrier
        // (an empty query).
        const killed = await admin.query(
          `select pg_terminate_backend(pid) from pg_stat_activity
            where application_name = $1 and (query like 'listen %' or query = '')`,
          [bName],
        );
        assert.equal(killed.rowCount, 1);
        // A change no trigger reports (triggers off for this session), made while B cannot hear.
        await waitUntil(() => b.services.signals.generation() !== before, { what: "B's listener to drop" });
        await admin.query('begin');
        await admin.query("set local session_replication_role = 'replica'");
        await admin.query('update api_keys set revoked_at = $1 where id = $2', [Date.now(), key.id]);
        await admin.query('commit');
        assert.equal((await listOnB(key.token)).statusCode, 401);
        // And after B listens again, its cache starts empty.
        await waitUntil(() => b.services.signals.generation() !== undefined, {
          what: "B's listener to return",
        });
        assert.equal((await listOnB(key.token)).statusCode, 401);
      } finally {
        await admin.end();
      }
    });
  }
});
