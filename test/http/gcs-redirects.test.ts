// Issue 21, finding 2, through HTTP on both databases (docs/api.md, "Outbound calls"): a gcs location
// whose `endpoint` is allowed but answers with a redirect to an address the egress guard refuses. The
// redirect is not followed (no connection reaches that address) and the call fails as refused.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FakeGcs } from '../fakes/gcs/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, gcsServiceAccount, unique } from '../support/fixtures.js';
import { ForbiddenServer } from '../support/forbidden-server.js';

const EMAIL = 'redirects@ferry-test.iam.gserviceaccount.com';

await eachDatabase('a gcs endpoint that redirects to a refused address', (database) => {
  let t: TestApp;
  let fake: FakeGcs;
  let forbidden: ForbiddenServer;
  let id: string;
  let bucket: string;

  before(async () => {
    fake = await FakeGcs.start();
    forbidden = await ForbiddenServer.start();
    const privateKey = fake.oauth.newAccount(EMAIL);
    bucket = unique('redir').toLowerCase();
    fake.state.createBucket(bucket, 'ferry-test');
    fake.state.put(bucket, 'inside.txt', Buffer.from('inside'), 'text/plain');
    // The fake (127.0.0.1) is allowed; the forbidden server (127.0.0.2) is not.
    t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' } });
    const created = await t.request({
      method: 'POST',
      url: '/v1/locations',
      payload: {
        provider: 'gcs',
        label: 'redirecting',
        secret: gcsServiceAccount(privateKey, EMAIL, fake.tokenUrl),
        metadata: { endpoint: fake.url },
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    id = created.json().id;
  });

  after(async () => {
    await t?.close();
    await forbidden?.close();
    await fake?.close();
  });

  test('the listing is answered as it is when the endpoint answers in place', async () => {
    const res = await t.request({ method: 'POST', url: '/v1/list', payload: { id, path: bucket } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      res.json().entries.map((e: { name: string }) => e.name),
      ['inside.txt'],
    );
  });

  test('a listing redirected to a refused address answers 400 naming it, and nothing reaches it', async () => {
    fake.server.injectWhen((r) => r.url.startsWith(`/storage/v1/b/${bucket}/o`), {
      status: 302,
      headers: { location: forbidden.url('/storage/v1/b/internal/o') },
    });
    const res = await t.request({ method: 'POST', url: '/v1/list', payload: { id, path: bucket } });
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json().message, new RegExp(`redirect to ${forbidden.origin}`));
    assert.equal(forbidden.connections, 0, 'no connection reached the forbidden server');
  });
});
