// POST /v1/list on an OAuth provider (the Dropbox fake, through the production store with only the
// base URLs changed), on both databases: a folder store lists its root without a hint; an expired or
// refused access token is renewed through the token endpoint and the call repeated once; a grant that
// is gone fails the location.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FakeDropbox } from '../fakes/dropbox/server.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';

await eachDatabase('POST /v1/list on dropbox', (database) => {
  let t: TestApp;
  let fake: FakeDropbox;
  before(async () => {
    fake = await new FakeDropbox().start();
    t = await startTestApp(database, {
      env: {
        FERRY_DROPBOX_API_URL: fake.apiUrl,
        FERRY_DROPBOX_CONTENT_URL: fake.contentUrl,
        FERRY_DROPBOX_TOKEN_URL: fake.tokenUrl,
      },
    });
  });
  after(async () => {
    await t.close();
    await fake.close();
  });

  async function location(tokens: {
    access_token: string;
    refresh_token: string;
    expiry: string;
  }): Promise<string> {
    const res = await t.request({
      method: 'POST',
      url: '/v1/locations',
      payload: { provider: 'dropbox', label: unique('dbx'), secret: tokens },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  }
  const status = async (id: string) =>
    (await t.request({ method: 'POST', url: '/v1/locations/status', payload: { id } })).json();

  test('a folder store lists its root with folders of size 0 and no hint', async () => {
    const tokens = fake.oauth.issue(unique('acct'));
    const id = await location(tokens);
    for (const path of ['Photos', 'Photos/2026']) {
      const res = await fetch(`${fake.apiUrl}/2/files/create_folder_v2`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ path: `/${path}`, autorename: false }),
      });
      assert.equal(res.status, 200);
    }
    const root = await t.request({ method: 'POST', url: '/v1/list', payload: { id } });
    assert.equal(root.statusCode, 200, root.body);
    assert.equal(root.json().hint, undefined);
    assert.deepEqual(root.json().entries, [{ name: 'Photos', path: 'Photos', size: 0, isDir: true }]);
    const deep = await t.request({ method: 'POST', url: '/v1/list', payload: { id, recurse: true } });
    assert.deepEqual(
      deep
        .json()
        .entries.map((e: { path: string }) => e.path)
        .sort(),
      ['Photos', 'Photos/2026'],
    );
    assert.equal(
      (await t.request({ method: 'POST', url: '/v1/list', payload: { id, path: 'Nope' } })).statusCode,
      404,
    );
  });

  test('an access token past its known expiry is refreshed before the listing, which answers', async () => {
    const tokens = fake.oauth.issue(unique('acct'));
    fake.oauth.expireAccessToken(tokens.access_token);
    const id = await location({ ...tokens, expiry: new Date(Date.now() - 60_000).toISOString() });
    const before = fake.oauth.refreshRequests.length;
    const res = await t.request({ method: 'POST', url: '/v1/list', payload: { id } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(fake.oauth.refreshRequests.length, before + 1);
    const after = await status(id);
    assert.equal(after.status, 'active');
    assert.ok(Date.parse(after.access_token_expires_at) > Date.now() + 30 * 60_000, 'a new expiry');
  });

  test('a 401 for a token the provider ended early: one refresh and one retry; requests at once share the refresh', async () => {
    const tokens = fake.oauth.issue(unique('acct'));
    const id = await location(tokens);
    fake.oauth.expireAccessToken(tokens.access_token);
    const before = fake.oauth.refreshRequests.length;
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => t.request({ method: 'POST', url: '/v1/list', payload: { id } })),
    );
    for (const res of answers) assert.equal(res.statusCode, 200, res.body);
    assert.equal(fake.oauth.refreshRequests.length, before + 1, 'one refresh for all four');
    assert.equal((await status(id)).consecutive_refresh_failures, 0);
  });

  test('a token rejected before its expiry (a revoked grant) answers 409 and marks the location failed', async () => {
    const tokens = fake.oauth.issue(unique('acct'));
    fake.oauth.revoke(tokens.refresh_token);
    const id = await location(tokens);
    const res = await t.request({ method: 'POST', url: '/v1/list', payload: { id } });
    assert.equal(res.statusCode, 409, res.body);
    const after = await status(id);
    assert.equal(after.status, 'failed');
    assert.ok(after.failure_reason);
  });
});
