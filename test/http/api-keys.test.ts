// docs/api.md "API keys" and "Authentication" through HTTP, on both databases.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';

await eachDatabase('API keys and authentication', (database) => {
  let t: TestApp;
  const clock = new ManualClock();
  before(async () => {
    t = await startTestApp(database, { clock });
  });
  after(() => t.close());

  const createKey = async (body: Record<string, unknown> = { name: unique('key') }) => {
    const res = await t.request({ method: 'POST', url: '/v1/tokens', payload: body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as {
      id: string;
      name: string;
      created_at: string;
      expires_at?: string;
      token: string;
      scopes: string[];
    };
  };
  const listAs = (token: string) => t.request({ method: 'GET', url: '/v1/locations', token });
  const keys = async () =>
    (await t.request({ method: 'GET', url: '/v1/tokens' })).json() as Array<Record<string, string>>;

  test('a request without Authorization answers 401 with WWW-Authenticate: Bearer and the standard shape', async () => {
    for (const headers of [
      {},
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer fry_nope' },
    ]) {
      const res = await t.request({ method: 'GET', url: '/v1/locations', token: null, headers });
      assert.equal(res.statusCode, 401, JSON.stringify(headers));
      assert.equal(res.headers['www-authenticate'], 'Bearer');
      assert.deepEqual(Object.keys(res.json()).sort(), ['error', 'message']);
      assert.equal(res.json().error, 401);
    }
  });

  test('creating a key answers 201 with the token once; the list shows the key without it', async () => {
    const key = await createKey({ name: 'ci deploys', expires_at: '2030-01-01T00:00:00Z' });
    assert.deepEqual(Object.keys(key).sort(), ['created_at', 'expires_at', 'id', 'name', 'scopes', 'token']);
    assert.deepEqual(key.scopes, ['read', 'transfer', 'remove', 'share', 'admin']);
    assert.equal(key.expires_at, '2030-01-01T00:00:00.000Z');
    assert.equal((await listAs(key.token)).statusCode, 200);
    const listed = (await keys()).find((k) => k.id === key.id);
    assert.ok(listed);
    assert.equal(listed.token, undefined);
    assert.equal(listed.name, 'ci deploys');
    const all = await t.request({ method: 'GET', url: '/v1/tokens' });
    assert.ok(!all.body.includes(key.token));
  });

  test('the token is stored only as a hash', async () => {
    const key = await createKey();
    const rows = await t.services.db.kysely.selectFrom('api_keys').selectAll().execute();
    assert.ok(!JSON.stringify(rows).includes(key.token));
  });

  test('create rejects a missing or empty name, an expiry in the past and unknown fields with 400', async () => {
    for (const body of [
      {},
      { name: '' },
      { name: 'x', expires_at: '2020-01-01T00:00:00Z' },
      { name: 'x', expires_at: 'soon' },
      { name: 'x', scope: 'all' },
    ]) {
      const res = await t.request({ method: 'POST', url: '/v1/tokens', payload: body });
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
    }
  });

  test('update renames a key and answers 204; the key keeps working', async () => {
    const key = await createKey();
    const res = await t.request({
      method: 'PATCH',
      url: `/v1/tokens/${key.id}`,
      payload: { name: 'renamed' },
    });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal((await keys()).find((k) => k.id === key.id)?.name, 'renamed');
    assert.equal((await listAs(key.token)).statusCode, 200);
  });

  test('update without name or expires_at, or with an empty name, is 400; unknown keys are 404', async () => {
    const key = await createKey();
    for (const payload of [{}, { name: '' }, { expires_at: 'later' }, { name: 'x', colour: 'red' }]) {
      const res = await t.request({ method: 'PATCH', url: `/v1/tokens/${key.id}`, payload });
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
    }
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await t.request({ method: 'PATCH', url: `/v1/tokens/${id}`, payload: { name: 'x' } });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error, 404);
    }
  });

  test('setting expires_at in the past ends the key at once without revoking it; extending it brings it back', async () => {
    const key = await createKey();
    const past = new Date(clock.now() - 1000).toISOString();
    assert.equal(
      (await t.request({ method: 'PATCH', url: `/v1/tokens/${key.id}`, payload: { expires_at: past } }))
        .statusCode,
      204,
    );
    const denied = await listAs(key.token);
    assert.equal(denied.statusCode, 401);
    const listed = (await keys()).find((k) => k.id === key.id);
    assert.equal(listed?.revoked_at, undefined);
    assert.equal(listed?.expires_at, past);
    const future = new Date(clock.now() + 3600_000).toISOString();
    await t.request({ method: 'PATCH', url: `/v1/tokens/${key.id}`, payload: { expires_at: future } });
    assert.equal((await listAs(key.token)).statusCode, 200);
  });

  test('a key stops working when the clock passes its expiry', async () => {
    const key = await createKey({ name: 'short', expires_at: new Date(clock.now() + 60_000).toISOString() });
    assert.equal((await listAs(key.token)).statusCode, 200);
    clock.advance(60_000);
    assert.equal((await listAs(key.token)).statusCode, 401);
  });

  test('revoking answers 204, the key gets 401 on the very next request and stays listed with revoked_at', async () => {
    const key = await createKey();
    assert.equal((await listAs(key.token)).statusCode, 200);
    const res = await t.request({ method: 'DELETE', url: `/v1/tokens/${key.id}` });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    const denied = await listAs(key.token);
    assert.equal(denied.statusCode, 401);
    assert.equal(denied.json().error, 401);
    const listed = (await keys()).find((k) => k.id === key.id);
    assert.ok(listed?.revoked_at);
    assert.equal((await t.request({ method: 'DELETE', url: `/v1/tokens/${key.id}` })).statusCode, 204);
    const missing = await t.request({
      method: 'DELETE',
      url: '/v1/tokens/00000000-0000-4000-8000-000000000000',
    });
    assert.equal(missing.statusCode, 404);
    assert.match(missing.json().message, /not found/);
  });

  test('a key can revoke itself', async () => {
    const key = await createKey();
    const res = await t.request({ method: 'DELETE', url: `/v1/tokens/${key.id}`, token: key.token });
    assert.equal(res.statusCode, 204);
    assert.equal((await listAs(key.token)).statusCode, 401);
  });

  test("keys of another workspace are 404 and its keys see only their own workspace's keys", async () => {
    const workspace = await ensureWorkspace(t.services.db.kysely, unique('team'), t.services.clock);
    const other = await t.services.apiKeys.create(workspace.id, { name: 'theirs' });
    const mine = await createKey();
    for (const [method, payload] of [
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await t.request({
        method,
        url: `/v1/tokens/${mine.id}`,
        token: other.token,
        ...(payload ? { payload } : {}),
      });
      assert.equal(res.statusCode, 404);
    }
    const theirs = (await t.request({ method: 'GET', url: '/v1/tokens', token: other.token })).json();
    assert.deepEqual(
      theirs.map((k: { id: string }) => k.id),
      [other.id],
    );
  });

  test('last_used_at is recorded, and written at most once a minute per key', async () => {
    const key = await createKey();
    assert.equal((await keys()).find((k) => k.id === key.id)?.last_used_at, undefined);
    const first = clock.now();
    await listAs(key.token);
    assert.equal((await keys()).find((k) => k.id === key.id)?.last_used_at, new Date(first).toISOString());
    clock.advance(30_000);
    await listAs(key.token);
    assert.equal((await keys()).find((k) => k.id === key.id)?.last_used_at, new Date(first).toISOString());
    clock.advance(31_000);
    await listAs(key.token);
    assert.equal(
      (await keys()).find((k) => k.id === key.id)?.last_used_at,
      new Date(clock.now()).toISOString(),
    );
  });
});

await eachDatabase('two processes on one database', (database) => {
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    a = await startTestApp(database);
    b = await startTestApp(database, { shareWith: a });
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  test('a key revoked through one instance gets 401 from the other on the next request', async () => {
    const key = (await a.request({ method: 'POST', url: '/v1/tokens', payload: { name: 'shared' } })).json();
    assert.equal(
      (await b.request({ method: 'GET', url: '/v1/locations', token: key.token })).statusCode,
      200,
    );
    assert.equal((await a.request({ method: 'DELETE', url: `/v1/tokens/${key.id}` })).statusCode, 204);
    assert.equal(
      (await b.request({ method: 'GET', url: '/v1/locations', token: key.token })).statusCode,
      401,
    );
  });

  test('a key expired through one instance gets 401 from the other on the next request', async () => {
    const key = (await b.request({ method: 'POST', url: '/v1/tokens', payload: { name: 'shared' } })).json();
    assert.equal(
      (await a.request({ method: 'GET', url: '/v1/locations', token: key.token })).statusCode,
      200,
    );
    const past = new Date(Date.now() - 1000).toISOString();
    assert.equal(
      (await b.request({ method: 'PATCH', url: `/v1/tokens/${key.id}`, payload: { expires_at: past } }))
        .statusCode,
      204,
    );
    assert.equal(
      (await a.request({ method: 'GET', url: '/v1/locations', token: key.token })).statusCode,
      401,
    );
  });

  test('a location created through one instance is read, with its secret, by the other', async () => {
    const res = await a.request({
      method: 'POST',
      url: '/v1/locations',
      payload: { provider: 's3', label: 'shared', secret: { access_key_id: 'AK', secret_access_key: 'SK' } },
    });
    const got = await b.request({ method: 'POST', url: '/v1/locations/get', payload: { id: res.json().id } });
    assert.equal(got.statusCode, 200);
    const row = await b.services.locations.resolve(await b.services.apiKeys.authenticate(b.token), {
      id: res.json().id,
    });
    assert.deepEqual(b.services.locations.storeLocation(row).secret.reveal(), {
      access_key_id: 'AK',
      secret_access_key: 'SK',
    });
  });
});

await eachDatabase('bootstrap', (database) => {
  test('processes starting together on an empty database make exactly one bootstrap key', async () => {
    const first = await startTestApp(database);
    try {
      // A second process sharing the database, and both racing bootstrap on a database emptied again.
      const second = await startTestApp(database, { shareWith: first });
      try {
        const db = first.services.db.kysely;
        await db.deleteFrom('api_keys').execute();
        await db.deleteFrom('workspaces').execute();
        const { bootstrapIfEmpty } = await import('../../src/bootstrap.js');
        const files = await Promise.all([
          bootstrapIfEmpty(first.services),
          bootstrapIfEmpty(second.services),
        ]);
        assert.equal(files.filter(Boolean).length, 1);
        const keys = await db.selectFrom('api_keys').select('id').execute();
        assert.equal(keys.length, 1);
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
  });
});
