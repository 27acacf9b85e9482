// The authentication cache (docs/engine.md, "Authentication cache") between two instances on one
// database, each with its own connections and its own cache, on both databases: B answers from its
// cache, and a key revoked or expired, or a location added, through A is seen by B's very next
// request, every time. On PostgreSQL, while B's listening connection is down nothing is answered from
// its cache, even for a change no trigger reported.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestApp, type TestApp } from '../support/app.js';
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

  if (database.name === 'postgres') {
    test("while B's listening connection is down, B answers nothing from its cache", async () => {
      const key = await newKey();
      await warm(key.token);
      const admin = new pg.Client({ connectionString: a.config.databaseUrl?.reveal() });
      await admin.connect();
      try {
        const before = b.services.signals.generation();
        assert.notEqual(before, undefined);
        // B's listening connection: the one of B's whose last statement was a LISTEN or the barrier.
        const killed = await admin.query(
          `select pg_terminate_backend(pid) from pg_stat_activity
            where application_name = $1 and (query like 'listen %' or query = 'select 1')`,
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
