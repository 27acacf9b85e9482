// The web console's files (docs/console.md, "Security" and "Size and caching"): public, with the strict
// Content-Security-Policy, the hashed files cached for good and the page revalidated, gzip when
// accepted. They need no database of their own; one app serves them on SQLite.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { startTestApp, type TestApp } from '../support/app.js';
import { buildConsole } from '../support/console-build.js';

buildConsole();

let t: TestApp;
before(async () => {
  t = await startTestApp({ name: 'sqlite', skip: undefined });
});
after(() => t.close());

test('/ answers the console page without a key, with the CSP, revalidated', async () => {
  const res = await t.request({ method: 'GET', url: '/', token: null });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.equal(
    res.headers['content-security-policy'],
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  );
  assert.equal(res.headers['cache-control'], 'no-cache');
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  assert.doesNotMatch(res.body, /<script>|<style>|style="/, 'no inline script or style');
});

test('the hashed script is immutable and goes gzipped to a client that accepts it', async () => {
  const page = await t.request({ method: 'GET', url: '/', token: null });
  const script = /src="\/ui\/(app-[0-9a-f]{12}\.js)"/.exec(page.body)?.[1];
  assert.ok(script, page.body);
  const plain = await t.request({ method: 'GET', url: `/ui/${script}`, token: null });
  assert.equal(plain.statusCode, 200);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.match(String(plain.headers['content-type']), /^text\/javascript/);
  const gz = await t.request({
    method: 'GET',
    url: `/ui/${script}`,
    token: null,
    headers: { 'accept-encoding': 'gzip, deflate, br' },
  });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(gunzipSync(gz.rawPayload).toString(), plain.body);
});

test('an unknown file under /ui/ is 404 without a key; other paths still need one', async () => {
  assert.equal((await t.request({ method: 'GET', url: '/ui/nothing.js', token: null })).statusCode, 404);
  assert.equal((await t.request({ method: 'GET', url: '/ui/index.html', token: null })).statusCode, 404);
  assert.equal((await t.request({ method: 'GET', url: '/v1/jobs', token: null })).statusCode, 401);
});

test('/favicon.ico answers 204 without a key, so no page of ferry logs a 401 for it in the browser', async () => {
  const res = await t.request({ method: 'GET', url: '/favicon.ico', token: null });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assert.equal(res.headers['cache-control'], 'public, max-age=86400');
});

test('/openapi.json describes GET /v1/events and not the console files', async () => {
  const doc = (await t.request({ method: 'GET', url: '/openapi.json', token: null })).json();
  assert.ok(doc.paths['/v1/events']?.get);
  assert.ok(doc.paths['/v1/events'].get.responses['200'].content['text/event-stream']);
  assert.equal(doc.paths['/'], undefined);
});
