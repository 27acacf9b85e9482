// docs/api.md "Errors", "Service endpoints (no API key)" and the egress rules through HTTP.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PROVIDERS } from '../../src/providers.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, secretFor, secretValues, unique } from '../support/fixtures.js';

await eachDatabase('service rules', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database);
  });
  after(() => t.close());

  test('an unknown route answers 404 in the standard shape, after the key is checked', async () => {
    const res = await t.request({ method: 'GET', url: '/v1/nothing-here' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(Object.keys(res.json()).sort(), ['error', 'message']);
    assert.equal(res.json().error, 404);
    const anonymous = await t.request({ method: 'GET', url: '/v1/nothing-here', token: null });
    assert.equal(anonymous.statusCode, 401);
  });

  test('a known path with another method answers 405 with Allow', async () => {
    const res = await t.request({ method: 'DELETE', url: '/v1/locations/get' });
    assert.equal(res.statusCode, 405);
    assert.equal(res.json().error, 405);
    assert.equal(res.headers.allow, 'POST');
    const tokens = await t.request({ method: 'PUT', url: '/v1/tokens/00000000-0000-4000-8000-000000000000' });
    assert.equal(tokens.statusCode, 405);
    assert.match(String(tokens.headers.allow), /PATCH/);
    assert.match(String(tokens.headers.allow), /DELETE/);
  });

  test('a body that is not JSON is 400; another content type is 415; both in the standard shape', async () => {
    const bad = await t.request({
      method: 'POST',
      url: '/v1/locations',
      headers: { 'content-type': 'application/json' },
      payload: '{"provider": "s3",',
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error, 400);
    const form = await t.request({
      method: 'POST',
      url: '/v1/locations',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'provider=s3',
    });
    assert.equal(form.statusCode, 415);
    assert.equal(form.json().error, 415);
    const none = await t.request({ method: 'POST', url: '/v1/locations/get' });
    assert.equal(none.statusCode, 400);
  });

  test('a body over the limit answers 413', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/v1/locations',
      payload: {
        provider: 's3',
        label: 'x',
        secret: secretFor('s3'),
        metadata: { pad: 'x'.repeat(1100 * 1024) },
      },
    });
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().error, 413);
  });

  test('a field of the wrong type is 400 and names the field', async () => {
    const res = await t.request({ method: 'POST', url: '/v1/locations/get', payload: { id: 42 } });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().message, /id/);
  });

  test('healthz, readyz, metrics and openapi.json need no key', async () => {
    const health = await t.request({ method: 'GET', url: '/healthz', token: null });
    assert.equal(health.statusCode, 200);
    const ready = await t.request({ method: 'GET', url: '/readyz', token: null });
    assert.equal(ready.statusCode, 200);
    await t.request({ method: 'GET', url: '/v1/locations' });
    const metrics = await t.request({ method: 'GET', url: '/metrics', token: null });
    assert.equal(metrics.statusCode, 200);
    assert.match(metrics.headers['content-type'] as string, /text\/plain/);
    assert.match(
      metrics.body,
      /ferry_http_requests_total\{method="GET",route="\/v1\/locations",status="200"\} \d+/,
    );
  });

  test('openapi.json is OpenAPI 3.1 with version 1.0.0 and describes every authenticated operation', async () => {
    const res = await t.request({ method: 'GET', url: '/openapi.json', token: null });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '1.0.0');
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    for (const op of [
      'GET /v1/locations',
      'POST /v1/locations',
      'PUT /v1/locations',
      'PATCH /v1/locations',
      'DELETE /v1/locations',
      'POST /v1/locations/get',
      'POST /v1/locations/refresh',
      'POST /v1/locations/status',
      'GET /v1/providers',
      'GET /v1/tokens',
      'POST /v1/tokens',
      'PATCH /v1/tokens/{id}',
      'DELETE /v1/tokens/{id}',
      'POST /v1/list',
      'POST /v1/buckets',
      'PUT /v1/files/{location}/{path}',
      'GET /v1/files/{location}/{path}',
      'HEAD /v1/files/{location}/{path}',
      'POST /v1/copy',
      'GET /v1/transfers',
      'GET /v1/transfers/{id}',
      'GET /v1/jobs',
      'GET /v1/jobs/{id}',
      'GET /v1/jobs/{id}/failures',
      'POST /v1/jobs/{id}/retry',
      'POST /v1/jobs/{id}/cancel',
      'POST /pull',
      'POST /move',
      'POST /remove',
      'POST /remove/preview',
    ]) {
      assert.ok(operations.includes(op), `${op} in openapi.json`);
    }
    for (const op of operations)
      assert.ok(!/healthz|readyz|metrics|openapi/.test(op), `${op} is not an API operation`);
    assert.deepEqual(doc.security, [{ bearer: [] }]);
    assert.deepEqual(doc.components.schemas.Error.required.sort(), ['error', 'message']);
  });

  test('readyz answers 503 when the database is gone', async () => {
    const other = await startTestApp(database);
    await other.services.db.close();
    for (let probe = 0; probe < 3; probe++) {
      const res = await other.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 503);
      assert.equal(res.json().error, 503);
    }
    // Logged once for the outage, not per probe, through request.log (made on first use): the line
    // carries the request's id.
    const warnings = other.logs.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'readyz: the database is not reachable');
    assert.equal(warnings.length, 1);
    assert.match(String(warnings[0]?.reqId), /^req-/);
    assert.equal(warnings[0]?.level, 40);
    // Its database is closed already; close() closes the rest and drops its schema (one was left
    // behind on every PostgreSQL run before).
    await other.close();
  });

  test('no secret or API key reaches a log line or a response', async () => {
    const values: string[] = [];
    const responses: string[] = [];
    for (const provider of PROVIDERS) {
      const secret = secretFor(provider);
      values.push(...secretValues(secret));
      const created = await t.request({
        method: 'POST',
        url: '/v1/locations',
        payload: { provider, label: unique(provider), secret },
      });
      responses.push(created.body);
      const id = created.json().id;
      for (const [method, url, payload] of [
        ['PUT', '/v1/locations', { id, secret }],
        ['PUT', '/v1/locations', { id, secret: { wrong: secret } }],
        ['POST', '/v1/locations/get', { id }],
        ['POST', '/v1/locations/status', { id }],
        ['POST', '/v1/locations', { provider, label: '', secret }],
        ['POST', '/v1/locations', { provider: provider === 'box' ? 's3' : 'box', label: 'x', secret }],
      ] as const) {
        responses.push((await t.request({ method, url, payload })).body);
      }
    }
    const key = (await t.request({ method: 'POST', url: '/v1/tokens', payload: { name: 'logged?' } })).json();
    values.push(key.token, t.token);
    await t.request({ method: 'GET', url: '/v1/locations', token: key.token });
    await t.request({ method: 'DELETE', url: `/v1/tokens/${key.id}` });
    await t.request({ method: 'GET', url: '/v1/locations', token: key.token });
    await t.request({ method: 'GET', url: '/v1/locations', token: `${key.token}x` });
    assert.ok(t.logs.lines.length > 20, 'logs were captured');
    for (const value of values) {
      assert.ok(!t.logs.text.includes(value), 'a secret reached the logs');
      for (const body of responses) assert.ok(!body.includes(value), 'a secret reached a response');
    }
  });

  test('each answer writes one request line (id, method, route pattern, status, time) and is counted by route', async () => {
    const id = crypto.randomUUID();
    const before = t.logs.lines.length;
    const res = await t.request({ method: 'GET', url: `/v1/transfers/${id}` });
    assert.equal(res.statusCode, 404);
    const lines = t.logs.lines
      .slice(before)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'request');
    assert.equal(lines.length, 1);
    const line = lines[0] ?? {};
    // Exactly these fields: a change that drops one, or adds one per request, fails here.
    assert.deepEqual(Object.keys(line).sort(), [
      'level',
      'method',
      'ms',
      'msg',
      'reqId',
      'route',
      'service',
      'status',
      'time',
    ]);
    assert.equal(line.level, 30);
    assert.equal(line.service, 'ferry');
    assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(line.method, 'GET');
    assert.equal(line.route, '/v1/transfers/:id');
    assert.equal(line.status, 404);
    assert.equal(typeof line.ms, 'number');
    assert.match(String(line.reqId), /./);
    assert.ok(!t.logs.lines.slice(before).join('\n').includes(id), 'the raw path is not logged');
    const metrics = (await t.request({ method: 'GET', url: '/metrics' })).body;
    assert.match(
      metrics,
      /ferry_http_requests_total\{method="GET",route="\/v1\/transfers\/:id",status="404"\} [1-9]/,
    );
    assert.match(
      metrics,
      /ferry_http_request_duration_seconds_count\{method="GET",route="\/v1\/transfers\/:id"\} [1-9]/,
    );
    assert.match(
      metrics,
      /ferry_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/v1\/transfers\/:id"\} [1-9]/,
    );
  });

  test('every answer is counted once by method, route and status, and timed once by method and route', async () => {
    const count = (body: string, pattern: RegExp) => Number(pattern.exec(body)?.[1] ?? 0);
    const total = /ferry_http_requests_total\{method="GET",route="\/healthz",status="200"\} (\d+)/;
    const timed = /ferry_http_request_duration_seconds_count\{method="GET",route="\/healthz"\} (\d+)/;
    const slow = /ferry_http_request_duration_seconds_bucket\{le="5",method="GET",route="\/healthz"\} (\d+)/;
    const first = (await t.request({ method: 'GET', url: '/metrics', token: null })).body;
    for (let i = 0; i < 3; i++) await t.request({ method: 'GET', url: '/healthz', token: null });
    const second = (await t.request({ method: 'GET', url: '/metrics', token: null })).body;
    assert.equal(count(second, total) - count(first, total), 3);
    assert.equal(count(second, timed) - count(first, timed), 3);
    assert.equal(count(second, slow) - count(first, slow), 3, 'each answer took less than 5 s');
  });
});
