// docs/api.md "Locations" (addressing, secrets, metadata, operations) and "Errors" through HTTP, on both
// databases.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { wholeWorkspace } from '../../src/domain/caller.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { PROVIDERS, type Provider } from '../../src/providers.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, secretFor, secretValues, unique } from '../support/fixtures.js';
import { waitUntil } from '../support/wait.js';

await eachDatabase('locations', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database);
  });
  after(() => t.close());

  const create = (body: Record<string, unknown>) =>
    t.request({ method: 'POST', url: '/v1/locations', payload: body });
  const createOk = async (provider: Provider, label = unique('loc'), extra: Record<string, unknown> = {}) => {
    const res = await create({ provider, label, secret: secretFor(provider), ...extra });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: string; provider: string; label: string; metadata?: Record<string, unknown> };
  };
  const post = (url: string, payload: unknown) =>
    t.request({ method: 'POST', url, payload: payload as object });

  test('create answers 201 with the projection and no secret; empty metadata is omitted', async () => {
    const secret = secretFor('s3');
    const label = unique('photos');
    const res = await create({ provider: 's3', label, secret });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['id', 'label', 'provider']);
    assert.match(body.id, /^[0-9a-f-]{36}$/);
    assert.equal(body.provider, 's3');
    assert.equal(body.label, label);
    for (const value of secretValues(secret)) assert.ok(!res.body.includes(value));
  });

  test('create keeps metadata and returns it', async () => {
    const body = await createOk('s3', unique('m'), {
      metadata: { region: 'eu-west-1', endpoint: 'http://127.0.0.1:9000' },
    });
    assert.deepEqual(body.metadata, { region: 'eu-west-1', endpoint: 'http://127.0.0.1:9000' });
  });

  test('every provider can be created, and the list shows summaries without secrets', async () => {
    const secrets = new Map<Provider, Record<string, unknown>>();
    const ids: string[] = [];
    for (const provider of PROVIDERS) {
      const secret = secretFor(provider);
      secrets.set(provider, secret);
      const res = await create({ provider, label: unique(provider), secret });
      assert.equal(res.statusCode, 201, `${provider}: ${res.body}`);
      ids.push(res.json().id);
    }
    const list = await t.request({ method: 'GET', url: '/v1/locations' });
    assert.equal(list.statusCode, 200);
    const items = list.json() as Array<Record<string, unknown>>;
    assert.ok(Array.isArray(items));
    for (const id of ids) {
      const item = items.find((i) => i.id === id);
      assert.ok(item, `location ${id} listed`);
      assert.deepEqual(Object.keys(item).sort(), ['created_at', 'id', 'label', 'provider', 'status']);
      assert.equal(item.status, 'active');
      assert.match(
        String(item.created_at),
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/,
        JSON.stringify(item),
      );
    }
    for (const secret of secrets.values()) {
      for (const value of secretValues(secret))
        assert.ok(!list.body.includes(value), 'no secret in the list');
    }
  });

  test('the database rows of all ten providers contain none of the secret values', async () => {
    const values: string[] = [];
    for (const provider of PROVIDERS) {
      const secret = secretFor(provider);
      values.push(...secretValues(secret));
      const res = await create({ provider, label: unique(provider), secret, metadata: { note: 'x' } });
      assert.equal(res.statusCode, 201);
    }
    const rows = await t.services.db.kysely.selectFrom('locations').selectAll().execute();
    const dump = JSON.stringify(rows);
    assert.equal(values.length, 19); // 5 key pairs, 4 token pairs, 1 private key
    for (const value of values) assert.ok(!dump.includes(value), 'secret value found in a database row');
    // The envelope is really ciphertext: the base64 of a value is not in it either.
    for (const value of values) assert.ok(!dump.includes(Buffer.from(value).toString('base64').slice(0, 16)));
  });

  test('a secret of the wrong shape for its provider answers 422 and names fields, not values', async () => {
    const oauth = secretFor('dropbox');
    const cases: Array<[Provider, unknown]> = [
      ['s3', oauth],
      ['s3', { access_key_id: 'AK' }],
      ['s3', { access_key_id: 'AK', secret_access_key: 'SK', extra: 'x' }],
      ['s3', { access_key_id: '', secret_access_key: 'SK' }],
      ['azureblob', { access_key_id: 1, secret_access_key: 'SK' }],
      ['s3', 'AK:SK'],
      ['s3', ['AK', 'SK']],
      ['dropbox', { access_token: 'a', refresh_token: 'b', expiry: 'tomorrow' }],
      ['box', secretFor('s3')],
      ['gcs', { service_account_json: '{not json' }],
      ['gcs', { service_account_json: { type: 'service_account', client_email: 'a@b' } }],
      ['gcs', { service_account_json: { type: 'authorized_user', client_email: 'a@b', private_key: 'k' } }],
      ['gcs', secretFor('s3')],
    ];
    for (const [provider, secret] of cases) {
      const res = await create({ provider, label: unique('bad'), secret });
      assert.equal(res.statusCode, 422, `${provider} ${JSON.stringify(secret)}: ${res.body}`);
      assert.equal(res.json().error, 422);
      assert.equal(typeof res.json().message, 'string');
    }
    const leaky = await create({ provider: 's3', label: 'x', secret: { ...oauth } });
    for (const value of secretValues(oauth)) assert.ok(!leaky.body.includes(value));
  });

  test('a gcs key file may be given as a JSON string', async () => {
    const secret = secretFor('gcs');
    const res = await create({
      provider: 'gcs',
      label: unique('g'),
      secret: { service_account_json: JSON.stringify(secret.service_account_json) },
    });
    assert.equal(res.statusCode, 201, res.body);
  });

  test('create rejects a missing secret, an unknown provider, an empty label, unknown fields and oversized metadata with 400', async () => {
    const cases: Array<Record<string, unknown>> = [
      { provider: 's3', label: 'x' },
      { provider: 'ftp', label: 'x', secret: secretFor('s3') },
      { provider: 's3', label: '', secret: secretFor('s3') },
      { provider: 's3', label: '   ', secret: secretFor('s3') },
      { provider: 's3', secret: secretFor('s3') },
      { provider: 's3', label: 'x', secret: secretFor('s3'), colour: 'blue' },
      { provider: 's3', label: 'x', secret: secretFor('s3'), metadata: { blob: 'x'.repeat(17 * 1024) } },
      { provider: 's3', label: 'x', secret: secretFor('s3'), metadata: 'eu-west-1' },
      { provider: 's3', label: 'x', secret: secretFor('s3'), metadata: { endpoint: 'ftp://host' } },
      { provider: 's3', label: 7, secret: secretFor('s3') },
    ];
    for (const body of cases) {
      const res = await create(body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(body).slice(0, 120)}: ${res.body}`);
      assert.deepEqual(Object.keys(res.json()).sort(), ['error', 'message']);
      assert.equal(res.json().error, 400);
    }
    const unknown = await create({ provider: 's3', label: 'x', secret: secretFor('s3'), colour: 'blue' });
    assert.match(unknown.json().message, /colour/);
  });

  test('metadata keys a store reads are checked by that store: a wrong type answers 400 naming the key, on create and on replace secret', async () => {
    const cases: Array<[Provider, Record<string, unknown>, RegExp]> = [
      ['s3', { endpoint: 'ftp://host' }, /metadata\.endpoint must be an http or https URL/],
      ['s3', { endpoint: 7 }, /metadata\.endpoint must be an http or https URL/],
      ['wasabi', { region: '' }, /metadata\.region must be a non-empty string/],
      ['b2', { region: 3 }, /metadata\.region must be a non-empty string/],
      ['r2', { force_path_style: 'yes' }, /metadata\.force_path_style must be a boolean/],
      ['gcs', { endpoint: 'not a url' }, /metadata\.endpoint must be an http or https URL/],
      ['azureblob', { endpoint: 'file:///etc' }, /metadata\.endpoint must be an http or https URL/],
    ];
    for (const [provider, metadata, message] of cases) {
      const res = await create({ provider, label: 'x', secret: secretFor(provider), metadata });
      assert.equal(res.statusCode, 400, `${provider} ${JSON.stringify(metadata)}: ${res.body}`);
      assert.deepEqual(res.json(), { error: 400, message: res.json().message });
      assert.match(res.json().message, message);

      const loc = await createOk(provider);
      const replaced = await t.request({
        method: 'PUT',
        url: '/v1/locations',
        payload: { id: loc.id, secret: secretFor(provider), metadata },
      });
      assert.equal(
        replaced.statusCode,
        400,
        `${provider} replace ${JSON.stringify(metadata)}: ${replaced.body}`,
      );
      assert.match(replaced.json().message, message);
    }
    // Keys a provider's store does not read are not its to check.
    const dropbox = await create({
      provider: 'dropbox',
      label: 'x',
      secret: secretFor('dropbox'),
      metadata: { region: 3, force_path_style: 'yes' },
    });
    assert.equal(dropbox.statusCode, 201, dropbox.body);
  });

  test('get addresses a location by name, by id, and by both', async () => {
    const loc = await createOk('wasabi');
    for (const body of [{ name: loc.label }, { id: loc.id }, { name: loc.label, id: loc.id }]) {
      const res = await post('/v1/locations/get', body);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { id: loc.id, provider: 'wasabi', label: loc.label });
    }
  });

  test('addressing errors: neither field 400, bad UUID 400, unknown id 404, unknown name 404 naming it, mismatched pair 404', async () => {
    const loc = await createOk('b2');
    const missing = unique('nowhere');
    const cases: Array<[unknown, number, RegExp?]> = [
      [{}, 400],
      [{ id: 'not-a-uuid' }, 400],
      [{ id: '00000000-0000-4000-8000-000000000000' }, 404],
      [{ name: missing }, 404, new RegExp(missing)],
      [{ name: unique('other'), id: loc.id }, 404],
    ];
    for (const [body, status, message] of cases) {
      const res = await post('/v1/locations/get', body);
      assert.equal(res.statusCode, status, `${JSON.stringify(body)}: ${res.body}`);
      assert.equal(res.json().error, status);
      if (message) assert.match(res.json().message, message);
    }
  });

  test('a bare name matching two locations answers 409 with both candidates, oldest first', async () => {
    const label = unique('shared');
    const first = await createOk('s3', label);
    // "Oldest first" needs two creation times: made in one millisecond, the two would tie.
    const firstMade = Date.now();
    await waitUntil(() => Date.now() > firstMade, {
      what: 'the clock to pass the first creation',
      pauseMs: 1,
    });
    const second = await createOk('dropbox', label);
    for (const [method, url, extra] of [
      ['POST', '/v1/locations/get', {}],
      ['POST', '/v1/locations/status', {}],
      ['POST', '/v1/locations/refresh', {}],
      ['PATCH', '/v1/locations', { label: 'new' }],
      ['PUT', '/v1/locations', { secret: secretFor('s3') }],
      ['DELETE', '/v1/locations', {}],
    ] as const) {
      const res = await t.request({ method, url, payload: { name: label, ...extra } });
      assert.equal(res.statusCode, 409, `${method} ${url}: ${res.body}`);
      const body = res.json();
      assert.equal(typeof body.error, 'string');
      assert.match(body.error, /id/);
      assert.equal(body.name, label);
      assert.deepEqual(
        body.candidates.map((c: { id: string }) => c.id),
        [first.id, second.id],
      );
      for (const c of body.candidates) {
        assert.deepEqual(Object.keys(c).sort(), ['created_at', 'id', 'provider', 'updated_at']);
      }
      assert.deepEqual(
        body.candidates.map((c: { provider: string }) => c.provider),
        ['s3', 'dropbox'],
      );
    }
    const chosen = await post('/v1/locations/get', { name: label, id: second.id });
    assert.equal(chosen.statusCode, 200);
    assert.equal(chosen.json().provider, 'dropbox');
  });

  test('replace secret keeps provider and label, validates the shape against the provider, and can replace metadata', async () => {
    const loc = await createOk('r2', unique('r2'), { metadata: { account_id: 'abc' } });
    const wrong = await t.request({
      method: 'PUT',
      url: '/v1/locations',
      payload: { id: loc.id, secret: secretFor('drive') },
    });
    assert.equal(wrong.statusCode, 422);
    const fresh = secretFor('r2');
    const res = await t.request({
      method: 'PUT',
      url: '/v1/locations',
      payload: { id: loc.id, secret: fresh },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      id: loc.id,
      provider: 'r2',
      label: loc.label,
      metadata: { account_id: 'abc' },
    });
    const row = await t.services.locations.resolve(wholeWorkspace(await workspaceId()), { id: loc.id });
    assert.deepEqual(t.services.locations.storeLocation(row).secret.reveal(), fresh);
    const withMeta = await t.request({
      method: 'PUT',
      url: '/v1/locations',
      payload: { name: loc.label, secret: fresh, metadata: { account_id: 'def' } },
    });
    assert.deepEqual(withMeta.json().metadata, { account_id: 'def' });
    const noSecret = await t.request({ method: 'PUT', url: '/v1/locations', payload: { id: loc.id } });
    assert.equal(noSecret.statusCode, 400);
  });

  test('a failed location becomes active again when its secret is replaced', async () => {
    const loc = await createOk('box');
    await t.services.locations.markFailed(loc.id, 'invalid_grant: refresh token revoked');
    let status = await post('/v1/locations/status', { id: loc.id });
    assert.equal(status.json().status, 'failed');
    assert.equal(status.json().failure_reason, 'invalid_grant: refresh token revoked');
    const list = await t.request({ method: 'GET', url: '/v1/locations' });
    const item = list.json().find((i: { id: string }) => i.id === loc.id);
    assert.equal(item.status, 'failed');
    assert.equal(item.validation_error, 'invalid_grant: refresh token revoked');
    await t.request({
      method: 'PUT',
      url: '/v1/locations',
      payload: { id: loc.id, secret: secretFor('box') },
    });
    status = await post('/v1/locations/status', { id: loc.id });
    assert.equal(status.json().status, 'active');
    assert.equal(status.json().failure_reason, undefined);
  });

  test('update label changes only the label; a missing or empty label is 400', async () => {
    const secret = secretFor('onedrive');
    const created = await create({ provider: 'onedrive', label: unique('od'), secret });
    const loc = created.json();
    const label = unique('renamed');
    const res = await t.request({ method: 'PATCH', url: '/v1/locations', payload: { id: loc.id, label } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { id: loc.id, provider: 'onedrive', label });
    const row = await t.services.locations.resolve(wholeWorkspace(await workspaceId()), { id: loc.id });
    assert.deepEqual(t.services.locations.storeLocation(row).secret.reveal(), secret);
    for (const payload of [{ id: loc.id }, { id: loc.id, label: '' }, { id: loc.id, label: null }]) {
      const bad = await t.request({ method: 'PATCH', url: '/v1/locations', payload });
      assert.equal(bad.statusCode, 400, JSON.stringify(payload));
    }
    const byNewName = await post('/v1/locations/get', { name: label });
    assert.equal(byNewName.statusCode, 200);
  });

  test('delete answers 204 with an empty body and the location is gone', async () => {
    const loc = await createOk('gcs');
    const res = await t.request({ method: 'DELETE', url: '/v1/locations', payload: { name: loc.label } });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal((await post('/v1/locations/get', { id: loc.id })).statusCode, 404);
    const again = await t.request({ method: 'DELETE', url: '/v1/locations', payload: { id: loc.id } });
    assert.equal(again.statusCode, 404);
  });

  test('refresh answers 202 at once and sets refresh_requested for OAuth locations only', async () => {
    const oauth = await createOk('drive');
    const res = await post('/v1/locations/refresh', { id: oauth.id });
    assert.equal(res.statusCode, 202);
    assert.equal(res.body, '');
    assert.equal((await post('/v1/locations/status', { id: oauth.id })).json().refresh_requested, true);
    const fixed = await createOk('s3');
    assert.equal((await post('/v1/locations/refresh', { id: fixed.id })).statusCode, 202);
    assert.equal((await post('/v1/locations/status', { id: fixed.id })).json().refresh_requested, false);
    assert.equal((await post('/v1/locations/refresh', { name: unique('none') })).statusCode, 404);
  });

  test('status shows rotation class and token expiry for OAuth providers and omits them for static ones', async () => {
    const expected: Array<[Provider, string | undefined]> = [
      ['dropbox', 'oauth-stable'],
      ['drive', 'oauth-stable'],
      ['onedrive', 'oauth-single-use'],
      ['box', 'oauth-single-use'],
      ['s3', undefined],
      ['gcs', undefined],
      ['azureblob', undefined],
    ];
    for (const [provider, rotation] of expected) {
      const secret = secretFor(provider);
      const loc = (await create({ provider, label: unique(provider), secret })).json();
      const res = await post('/v1/locations/status', { id: loc.id });
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.status, 'active');
      assert.equal(body.rotation_class, rotation);
      assert.equal(body.refresh_requested, false);
      assert.equal(body.consecutive_refresh_failures, 0);
      assert.equal(body.last_refresh_attempt_at, undefined);
      assert.equal(body.failure_reason, undefined);
      assert.equal(body.last_refresh_error, undefined);
      if (rotation)
        assert.equal(body.access_token_expires_at, new Date(secret.expiry as string).toISOString());
      else assert.equal(body.access_token_expires_at, undefined);
    }
    assert.equal((await post('/v1/locations/status', { name: unique('none') })).statusCode, 404);
  });

  test('labels are not unique, also across providers', async () => {
    const label = unique('dup');
    await createOk('s3', label);
    await createOk('s3', label);
    await createOk('box', label);
    const list = (await t.request({ method: 'GET', url: '/v1/locations' })).json();
    assert.equal(list.filter((i: { label: string }) => i.label === label).length, 3);
  });

  test("another workspace's locations do not exist for the caller", async () => {
    const mine = await createOk('s3');
    const workspace = await ensureWorkspace(t.services.db.kysely, unique('ws'), t.services.clock);
    const other = await t.services.apiKeys.create(workspace.id, { name: 'other' });
    const asOther = (opts: Parameters<TestApp['request']>[0]) => t.request({ ...opts, token: other.token });
    const list = await asOther({ method: 'GET', url: '/v1/locations' });
    assert.deepEqual(list.json(), []);
    for (const body of [{ id: mine.id }, { name: mine.label }]) {
      const res = await asOther({ method: 'POST', url: '/v1/locations/get', payload: body });
      assert.equal(res.statusCode, 404);
      const del = await asOther({ method: 'DELETE', url: '/v1/locations', payload: body });
      assert.equal(del.statusCode, 404);
    }
    assert.equal((await post('/v1/locations/get', { id: mine.id })).statusCode, 200);
  });

  async function workspaceId(): Promise<string> {
    const principal = await t.services.apiKeys.authenticate(t.token);
    return principal.workspaceId;
  }
});
