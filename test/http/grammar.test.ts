// docs/api.md, "Addressing a location": copy takes `location:path`, the other operations
// `location/path`. A request in the other grammar is refused with an error that names the form the
// route takes and shows the value rewritten, on both databases. Nothing is accepted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';
import { type Call, createLocation, newWorkspace } from '../support/transfers.js';

await eachDatabase('path grammars', (database) => {
  let t: TestApp;
  let call: Call;
  let label: string;
  before(async () => {
    t = await startTestApp(database);
    call = await newWorkspace(t);
    ({ label } = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
      metadata: { endpoint: 'http://127.0.0.1:9' },
    }));
  });
  after(() => t.close());

  test('copy given location/path says copy takes location:path, rewritten', async () => {
    const res = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${label}/my-bucket/a.jpg`, to: `${label}:backup/a.jpg` },
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), {
      error: 400,
      message: `from must be "<location>:<path>" or {name|id, path} (the "<location>/<path>" form is for move, remove, pull, share and send): did you mean "${label}:my-bucket/a.jpg"?`,
    });
  });

  for (const [route, field, body] of [
    ['/move', 'from', (v: string) => ({ from: v, to: `${label}/my-bucket/sorted/` })],
    ['/remove', 'path', (v: string) => ({ path: v })],
    ['/remove/preview', 'path', (v: string) => ({ path: v })],
    ['/share', 'file', (v: string) => ({ file: v })],
  ] as const) {
    test(`${route} given location:path says it takes location/path, rewritten`, async () => {
      const res = await call({ method: 'POST', url: route, payload: body(`${label}:my-bucket/a.jpg`) });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), {
        error: 404,
        message: `no location is named "${label}:my-bucket"; ${field} takes "<location>/<path>" here (the "<location>:<path>" form is for /v1/copy): did you mean "${label}/my-bucket/a.jpg"?`,
      });
    });
  }

  test('a location that is simply missing keeps the plain message', async () => {
    const res = await call({ method: 'POST', url: '/remove', payload: { path: 'nosuch/my-bucket/a.jpg' } });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { error: 404, message: 'no location is named "nosuch"' });
  });

  test('a single-object source with a prefix destination says which slash is missing', async () => {
    const res = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${label}:my-bucket/2026`, to: `${label}:backup/x/` },
    });
    assert.equal(res.statusCode, 400);
    assert.match(
      res.json().message,
      /^"to" ends with "\/" \(a prefix\) but "from" names one object: end "from" with "\/"/,
    );
  });
});
