// The API's route map (src/api/routes.ts) as the CLI's client calls it (src/cli/http.ts): a route and its
// parts make the request (`{id}` filled in and encoded, the query's given fields in their order, the
// body as JSON), and tsc refuses a call the map does not allow: each @ts-expect-error below is checked
// by `npm run test:static`, which fails if the line type-checks. A server of fetch answers here: no socket.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Plan, Planning } from '../../src/api/routes.js';
import { pathOf } from '../../src/api/routes.js';
import { createApi } from '../../src/cli/http.js';
import { ApiKey, type Settings } from '../../src/cli/settings.js';

const settings: Settings = {
  url: 'http://ferry.test',
  urlSource: 'default',
  key: new ApiKey('k'),
  keySource: 'FERRY_API_KEY',
};

/** A client whose every request is recorded and answered with `answer` as JSON. */
function recording(answer: unknown = {}) {
  const requests: { method: string; url: string; body: string | undefined; type: string | null }[] = [];
  const fetcher = (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    requests.push({
      method: String(init?.method),
      url: String(input),
      body: typeof init?.body === 'string' ? init.body : undefined,
      type: headers.get('content-type'),
    });
    return new Response(JSON.stringify(answer), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { api: createApi(settings, { fetcher }), requests };
}

test('pathOf fills {id} encoded and appends the given query fields in their order, leaving out the undefined', () => {
  assert.equal(pathOf('/v1/jobs/{id}', { id: 'a b/c' }), '/v1/jobs/a%20b%2Fc');
  assert.equal(
    pathOf('/v1/jobs', { query: { limit: '20', cursor: undefined, schedule_id: 'x&y=z' } }),
    '/v1/jobs?limit=20&schedule_id=x%26y%3Dz',
  );
  assert.equal(pathOf('/v1/tokens'), '/v1/tokens');
  assert.equal(pathOf('/v1/audit', { query: {} }), '/v1/audit');
});

test('a call through the map sends its method, path, query and body; a GET and a call without a body send none', async () => {
  const { api, requests } = recording({ job_id: 'j', status: 'planning' });
  await api.get('/v1/jobs', { query: { limit: '50', schedule_id: 's1' } });
  await api.send('POST', '/v1/jobs/{id}/retry', { id: 'j1', body: {} });
  await api.send('DELETE', '/v1/shares/{id}', { id: 'sh' });
  const started: Planning = await api.send('POST', '/v1/sync', { body: { from: 'a:b/', to: 'c:d/' } });
  assert.equal(started.job_id, 'j');
  assert.deepEqual(requests, [
    { method: 'GET', url: 'http://ferry.test/v1/jobs?limit=50&schedule_id=s1', body: undefined, type: null },
    { method: 'POST', url: 'http://ferry.test/v1/jobs/j1/retry', body: '{}', type: 'application/json' },
    { method: 'DELETE', url: 'http://ferry.test/v1/shares/sh', body: undefined, type: null },
    {
      method: 'POST',
      url: 'http://ferry.test/v1/sync',
      body: '{"from":"a:b/","to":"c:d/"}',
      type: 'application/json',
    },
  ]);
});

test('tsc checks each call against the map: the path, the method, {id}, the body and the answer', async () => {
  const { api, requests } = recording({ plan_id: 'p', entries: [] });
  // A dry run answers the plan, typed as such.
  const plan: Plan = await api.send('POST', '/v1/sync', { body: { from: 'a:', to: 'b:', dry_run: true } });
  assert.equal(plan.plan_id, 'p');
  // @ts-expect-error no such route
  await api.get('/v1/nothing');
  // @ts-expect-error POST /v1/list is not a GET
  await api.get('/v1/list');
  // @ts-expect-error the path names {id}, and no id is given
  await api.get('/v1/jobs/{id}');
  // @ts-expect-error a bucket's body has no colour
  await api.send('POST', '/v1/buckets', { body: { bucket: 'b', colour: 'red' } });
  // @ts-expect-error a copy's overwrite is one of its modes
  await api.send('POST', '/v1/copy', { body: { from: 'a:', to: 'b:', overwrite: 'sometimes' } });
  // @ts-expect-error a sync's answer is its job, not a plan
  const notPlan: Plan = await api.send('POST', '/v1/sync', { body: { from: 'a:', to: 'b:' } });
  // @ts-expect-error an API key's answer has no token after its creation
  assert.equal((await api.get('/v1/key')).token, undefined);
  assert.ok(notPlan);
  assert.equal(requests.length, 8);
});
