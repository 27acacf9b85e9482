// Scopes (docs/api.md, "Scopes"), table-driven over /openapi.json on both databases: every operation it
// lists is in the table below with the scope it needs; a key with every scope but that one gets 403
// naming it, and a key with only that scope gets the operation's own answer (2xx, or where the fixture
// cannot give one, the status of the route's own rule, past the scope check). A route added without a
// row here fails the first test; a route that declares no scope stops the server at start-up
// (src/http/auth.ts), which every test here would show.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import type { InjectOptions } from 'fastify';
import { SCOPES, type Scope } from '../../src/api/keys.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { openEvents } from '../support/events.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { TestSmtp } from '../support/smtp.js';
import { createLocation, newWorkspace, s3Client, seedBucket } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

type Sample = () => Promise<InjectOptions>;
interface Row {
  scope: Scope | 'any';
  /** A request that succeeds for a key with the scope. */
  sample: Sample;
  /** What that request answers when not 2xx: the route's own rule, reached past the scope check. */
  answers?: number;
  /** The same operation chosen to be a read by its body (a dry run, a preview). */
  read?: Sample;
}

eachDatabase('scopes on every route', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let smtp: TestSmtp;
  let client: S3Client;
  before(async () => {
    [s3, smtp] = await Promise.all([startS3rver(), new TestSmtp().start()]);
    client = s3Client(s3.endpoint);
    t = await startTestApp(database, {
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_SMTP_URL: smtp.url },
    });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await Promise.all([s3.close(), smtp.close()]);
  });

  /** A workspace with a location over a seeded bucket, and keys with chosen scopes. */
  async function world() {
    const call = await newWorkspace(t);
    const secret = { access_key_id: 'AKIDSAME', secret_access_key: 'same-secret' };
    const metadata = { endpoint: s3.endpoint };
    const loc = await createLocation(call, { provider: 's3', secret, metadata });
    const bucket = await seedBucket(client, {
      'in/a.txt': 'alpha',
      'in/b.txt': 'bravo',
      'rm/c.txt': 'charlie',
    });
    const keyWith = async (scopes: readonly Scope[]) => {
      const res = await call({ method: 'POST', url: '/v1/tokens', payload: { name: unique('k'), scopes } });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().token as string;
    };
    const post = async (url: string, payload: unknown, status = [200, 201, 202]) => {
      const res = await call({ method: 'POST', url, payload: payload as Record<string, unknown> });
      assert.ok(status.includes(res.statusCode), `${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };
    const newLocation = async () => (await createLocation(call, { provider: 's3', secret, metadata })).id;
    const copy = () =>
      post('/v1/copy', { from: `${loc.label}:${bucket}/in/`, to: `${loc.label}:${bucket}/out/` });
    const single = () =>
      post('/v1/copy', { from: `${loc.label}:${bucket}/in/a.txt`, to: `${loc.label}:${bucket}/one/a.txt` });
    const share = () => post('/share', { file: `${loc.label}/${bucket}/in/a.txt` });
    const send = () =>
      post('/send', {
        source: `${loc.label}/${bucket}/in/a.txt`,
        to: ['ann@example.com'],
        scheduledAt: 'in 2 hours',
      });
    const hook = () => post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['job.complete'] });
    const schedule = () =>
      post('/v1/schedules', {
        name: unique('s'),
        every: 'every day at 02:00',
        action: { copy: { from: `${loc.label}:${bucket}/in/`, to: `${loc.label}:${bucket}/nightly/` } },
      });
    const plan = (body: Record<string, unknown>) =>
      post(body.path ? '/remove' : '/v1/copy', { ...body, dry_run: true });
    return { call, loc, bucket, keyWith, post, copy, single, share, send, hook, schedule, plan, newLocation };
  }
  type World = Awaited<ReturnType<typeof world>>;

  const json = (
    method: NonNullable<InjectOptions['method']>,
    url: string,
    payload?: unknown,
  ): InjectOptions => ({
    method,
    url,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });

  /** Every operation of /openapi.json, as `METHOD path`. */
  const table = (w: World): Record<string, Row> => {
    const at = (path: string) => `${w.loc.label}/${w.bucket}/${path}`;
    const secret = { access_key_id: 'AKIDSAME', secret_access_key: 'same-secret' };
    return {
      'GET /v1/locations': { scope: 'read', sample: async () => json('GET', '/v1/locations') },
      'GET /v1/providers': { scope: 'read', sample: async () => json('GET', '/v1/providers') },
      'POST /v1/locations': {
        scope: 'admin',
        sample: async () =>
          json('POST', '/v1/locations', {
            provider: 's3',
            label: unique('new'),
            secret,
            metadata: { endpoint: s3.endpoint },
          }),
      },
      'PUT /v1/locations': {
        scope: 'admin',
        sample: async () => json('PUT', '/v1/locations', { id: await w.newLocation(), secret }),
      },
      'PATCH /v1/locations': {
        scope: 'admin',
        sample: async () =>
          json('PATCH', '/v1/locations', { id: await w.newLocation(), label: unique('renamed') }),
      },
      'DELETE /v1/locations': {
        scope: 'admin',
        sample: async () => json('DELETE', '/v1/locations', { id: await w.newLocation() }),
      },
      'POST /v1/locations/get': {
        scope: 'read',
        sample: async () => json('POST', '/v1/locations/get', { id: w.loc.id }),
      },
      'POST /v1/locations/refresh': {
        scope: 'admin',
        sample: async () => json('POST', '/v1/locations/refresh', { id: w.loc.id }),
      },
      'POST /v1/locations/status': {
        scope: 'read',
        sample: async () => json('POST', '/v1/locations/status', { id: w.loc.id }),
      },
      'POST /v1/tokens': {
        scope: 'admin',
        sample: async () => json('POST', '/v1/tokens', { name: unique('k') }),
      },
      'GET /v1/tokens': { scope: 'admin', sample: async () => json('GET', '/v1/tokens') },
      'GET /v1/key': { scope: 'any', sample: async () => json('GET', '/v1/key') },
      'GET /v1/audit': { scope: 'admin', sample: async () => json('GET', '/v1/audit') },
      'GET /v1/shares/{id}/downloads': {
        scope: 'read',
        sample: async () => json('GET', `/v1/shares/${(await w.share()).id}/downloads`),
      },
      'PATCH /v1/tokens/{id}': {
        scope: 'admin',
        sample: async () => {
          const made = await w.post('/v1/tokens', { name: unique('k') });
          return json('PATCH', `/v1/tokens/${made.id}`, { name: unique('renamed') });
        },
      },
      'DELETE /v1/tokens/{id}': {
        scope: 'admin',
        sample: async () =>
          json('DELETE', `/v1/tokens/${(await w.post('/v1/tokens', { name: unique('k') })).id}`),
      },
      'POST /v1/list': {
        scope: 'read',
        sample: async () => json('POST', '/v1/list', { id: w.loc.id, path: w.bucket }),
      },
      'POST /v1/buckets': {
        scope: 'admin',
        sample: async () => json('POST', '/v1/buckets', { id: w.loc.id, bucket: unique('nb').toLowerCase() }),
      },
      'PUT /v1/files/{location}/{path}': {
        scope: 'transfer',
        sample: async () => ({
          method: 'PUT',
          url: `/v1/files/${w.loc.id}/${w.bucket}/up/${unique('f')}.txt`,
          payload: 'uploaded',
          headers: { 'content-type': 'application/octet-stream' },
        }),
      },
      'GET /v1/files/{location}/{path}': {
        scope: 'read',
        sample: async () => json('GET', `/v1/files/${w.loc.id}/${w.bucket}/in/a.txt`),
      },
      'HEAD /v1/files/{location}/{path}': {
        scope: 'read',
        sample: async () => json('HEAD', `/v1/files/${w.loc.id}/${w.bucket}/in/a.txt`),
      },
      'POST /v1/copy': {
        scope: 'transfer',
        sample: async () =>
          json('POST', '/v1/copy', {
            from: `${w.loc.label}:${w.bucket}/in/`,
            to: `${w.loc.label}:${w.bucket}/c/`,
          }),
        read: async () =>
          json('POST', '/v1/copy', {
            from: `${w.loc.label}:${w.bucket}/in/`,
            to: `${w.loc.label}:${w.bucket}/c/`,
            dry_run: true,
          }),
      },
      'POST /v1/sync': {
        scope: 'transfer',
        sample: async () =>
          json('POST', '/v1/sync', {
            from: `${w.loc.label}:${w.bucket}/in/`,
            to: `${w.loc.label}:${w.bucket}/s/`,
          }),
        // A dry run is a read, also of a sync that deletes (its run needs remove: deleting-scopes.test.ts).
        read: async () =>
          json('POST', '/v1/sync', {
            from: `${w.loc.label}:${w.bucket}/in/`,
            to: `${w.loc.label}:${w.bucket}/s/`,
            delete: true,
            dry_run: true,
          }),
      },
      // A verify reads both prefixes and writes nothing (docs/api.md, "Verify").
      'POST /v1/verify': {
        scope: 'read',
        sample: async () =>
          json('POST', '/v1/verify', {
            from: `${w.loc.label}:${w.bucket}/in/`,
            to: `${w.loc.label}:${w.bucket}/v/`,
          }),
      },
      'GET /v1/transfers/{id}': {
        scope: 'read',
        sample: async () => json('GET', `/v1/transfers/${(await w.single()).id}`),
      },
      'GET /v1/transfers': { scope: 'read', sample: async () => json('GET', '/v1/transfers') },
      'GET /v1/transfers/{id}/failures': {
        scope: 'read',
        sample: async () => json('GET', `/v1/transfers/${(await w.single()).id}/failures`),
      },
      'GET /v1/transfers/{id}/report': {
        scope: 'read',
        sample: async () => json('GET', `/v1/transfers/${(await w.single()).id}/report`),
      },
      'POST /v1/transfers/{id}/retry': {
        scope: 'transfer',
        sample: async () => json('POST', `/v1/transfers/${(await w.single()).id}/retry`),
        // Only a failed transfer is retried: the route's own answer for a queued one.
        answers: 409,
      },
      'GET /v1/jobs/{id}': {
        scope: 'read',
        sample: async () => json('GET', `/v1/jobs/${(await w.copy()).job_id}`),
      },
      'GET /v1/jobs': { scope: 'read', sample: async () => json('GET', '/v1/jobs') },
      'GET /v1/jobs/{id}/failures': {
        scope: 'read',
        sample: async () => json('GET', `/v1/jobs/${(await w.copy()).job_id}/failures`),
      },
      'GET /v1/jobs/{id}/report': {
        scope: 'read',
        sample: async () => json('GET', `/v1/jobs/${(await w.copy()).job_id}/report`),
      },
      'POST /v1/jobs/{id}/retry': {
        scope: 'transfer',
        sample: async () => json('POST', `/v1/jobs/${(await w.copy()).job_id}/retry`),
        answers: 409,
      },
      'POST /v1/jobs/{id}/undo': {
        // An undo of a remove needs the remove's own scope (an undo of the others needs transfer too:
        // undo.test.ts); one not yet finished is the route's own 409.
        scope: 'remove',
        sample: async () =>
          json('POST', `/v1/jobs/${(await w.post('/remove', { path: at('rm/*.txt') })).id}/undo`),
        answers: 409,
      },
      'POST /v1/jobs/{id}/cancel': {
        scope: 'transfer',
        sample: async () => json('POST', `/v1/jobs/${(await w.copy()).job_id}/cancel`),
      },
      'POST /pull': {
        scope: 'transfer',
        sample: async () =>
          json('POST', '/pull', { from: [`${s3.endpoint}/${w.bucket}/in/a.txt`], to: at('pulled/') }),
      },
      'POST /move': {
        scope: 'transfer',
        sample: async () => json('POST', '/move', { from: at('in/b.txt'), to: at('moved/') }),
        read: async () => json('POST', '/move', { from: at('in/*.txt'), to: at('moved/'), dry_run: true }),
      },
      'POST /remove': {
        scope: 'remove',
        sample: async () => json('POST', '/remove', { path: at('rm/c.txt') }),
        read: async () => json('POST', '/remove', { path: at('rm/**'), dry_run: true }),
      },
      'POST /remove/preview': {
        scope: 'read',
        sample: async () => json('POST', '/remove/preview', { path: at('in/**') }),
      },
      'POST /move/preview': {
        scope: 'read',
        sample: async () => json('POST', '/move/preview', { from: at('in/*.txt'), to: at('elsewhere/') }),
      },
      'GET /v1/plans/{id}': {
        scope: 'read',
        sample: async () =>
          json(
            'GET',
            `/v1/plans/${(await w.plan({ from: `${w.loc.label}:${w.bucket}/in/`, to: `${w.loc.label}:${w.bucket}/p/` })).plan_id}`,
          ),
      },
      'POST /v1/plans/{id}/run': {
        scope: 'transfer',
        sample: async () =>
          json(
            'POST',
            `/v1/plans/${(await w.plan({ from: `${w.loc.label}:${w.bucket}/in/`, to: `${w.loc.label}:${w.bucket}/p/` })).plan_id}/run`,
          ),
      },
      'GET /v1/events': { scope: 'read', sample: async () => json('GET', '/v1/events') },
      'POST /share': { scope: 'share', sample: async () => json('POST', '/share', { file: at('in/a.txt') }) },
      'GET /v1/shares': { scope: 'read', sample: async () => json('GET', '/v1/shares') },
      'DELETE /v1/shares/{id}': {
        scope: 'share',
        sample: async () => json('DELETE', `/v1/shares/${(await w.share()).id}`),
      },
      'POST /send': {
        scope: 'share',
        sample: async () =>
          json('POST', '/send', {
            source: at('in/a.txt'),
            to: ['ann@example.com'],
            scheduledAt: 'in 3 hours',
          }),
      },
      'GET /v1/sends': { scope: 'read', sample: async () => json('GET', '/v1/sends') },
      'GET /v1/sends/{id}': {
        scope: 'read',
        sample: async () => json('GET', `/v1/sends/${(await w.send()).id}`),
      },
      'POST /v1/sends/{id}/cancel': {
        scope: 'share',
        sample: async () => json('POST', `/v1/sends/${(await w.send()).id}/cancel`),
      },
      'POST /v1/webhooks': {
        scope: 'admin',
        sample: async () =>
          json('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['job.complete'] }),
      },
      'GET /v1/webhooks': { scope: 'admin', sample: async () => json('GET', '/v1/webhooks') },
      'GET /v1/webhooks/{id}': {
        scope: 'admin',
        sample: async () => json('GET', `/v1/webhooks/${(await w.hook()).id}`),
      },
      'PATCH /v1/webhooks/{id}': {
        scope: 'admin',
        sample: async () => json('PATCH', `/v1/webhooks/${(await w.hook()).id}`, { events: ['job.failed'] }),
      },
      'DELETE /v1/webhooks/{id}': {
        scope: 'admin',
        sample: async () => json('DELETE', `/v1/webhooks/${(await w.hook()).id}`),
      },
      'GET /v1/webhooks/{id}/deliveries': {
        scope: 'admin',
        sample: async () => json('GET', `/v1/webhooks/${(await w.hook()).id}/deliveries`),
      },
      'POST /v1/schedules': {
        scope: 'transfer',
        sample: async () =>
          json('POST', '/v1/schedules', {
            name: unique('s'),
            every: 'every day at 03:00',
            action: { copy: { from: `${w.loc.label}:${w.bucket}/in/`, to: `${w.loc.label}:${w.bucket}/n/` } },
          }),
      },
      'GET /v1/schedules': { scope: 'read', sample: async () => json('GET', '/v1/schedules') },
      'GET /v1/schedules/{id}': {
        scope: 'read',
        sample: async () => json('GET', `/v1/schedules/${(await w.schedule()).id}`),
      },
      'PATCH /v1/schedules/{id}': {
        scope: 'transfer',
        sample: async () => json('PATCH', `/v1/schedules/${(await w.schedule()).id}`, { paused: true }),
      },
      'DELETE /v1/schedules/{id}': {
        scope: 'transfer',
        sample: async () => json('DELETE', `/v1/schedules/${(await w.schedule()).id}`),
      },
      'POST /v1/schedules/{id}/run': {
        scope: 'transfer',
        sample: async () => json('POST', `/v1/schedules/${(await w.schedule()).id}/run`),
      },
    };
  };

  /** The app's address: it listens for the event stream, which inject cannot hold open. */
  async function base(): Promise<string> {
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 }).catch(() => t.app.server.address());
    const port = typeof address === 'string' ? new URL(address).port : (address as { port: number }).port;
    return `http://127.0.0.1:${port}`;
  }

  /** GET /v1/events holds its answer open: its status, then the stream is dropped. */
  async function statusOf(options: InjectOptions, token: string): Promise<{ status: number; body: string }> {
    if (options.url === '/v1/events') {
      const stream = await openEvents(await base(), token);
      stream.close();
      return { status: stream.status, body: stream.body };
    }
    const res = await t.request({ ...options, token });
    return { status: res.statusCode, body: res.body };
  }

  test('every operation in /openapi.json has a row; a key without its scope gets 403 naming it, a key with only that scope its answer', async () => {
    const w = await world();
    const rows = table(w);
    const doc = (await t.request({ method: 'GET', url: '/openapi.json', token: null })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    assert.deepEqual(
      listed.filter((op) => rows[op] === undefined),
      [],
      'operations of /openapi.json without a row here',
    );
    assert.deepEqual(
      Object.keys(rows).filter((op) => !listed.includes(op)),
      [],
      'rows here for no operation of /openapi.json',
    );
    const only = new Map<Scope, string>();
    const allBut = new Map<Scope, string>();
    for (const scope of SCOPES) {
      only.set(scope, await w.keyWith([scope]));
      allBut.set(scope, await w.keyWith(SCOPES.filter((s) => s !== scope)));
    }
    for (const op of listed) {
      const row = rows[op] as Row;
      // 403 in /openapi.json for every operation behind a key.
      const [method, path] = op.split(' ') as [string, string];
      const operation = doc.paths[path]?.[method.toLowerCase()] as { responses: Record<string, unknown> };
      const responses = operation.responses;
      assert.ok(responses['403'], `${op}: /openapi.json lists 403`);
      if (row.scope === 'any') {
        for (const scope of SCOPES) {
          const { status, body } = await statusOf(await row.sample(), only.get(scope) as string);
          assert.ok(status >= 200 && status < 300, `${op} with only ${scope}: ${status} ${body}`);
        }
        continue;
      }
      const refused = await statusOf(await row.sample(), allBut.get(row.scope) as string);
      assert.equal(refused.status, 403, `${op} without ${row.scope}: ${refused.body}`);
      // A HEAD answer has no body to name it in.
      if (method !== 'HEAD')
        assert.match(refused.body, new RegExp(`lacks the \\\\?"${row.scope}\\\\?" scope`), op);
      const allowed = await statusOf(await row.sample(), only.get(row.scope) as string);
      if (row.answers === undefined) {
        assert.ok(
          allowed.status >= 200 && allowed.status < 300,
          `${op} with ${row.scope}: ${allowed.status} ${allowed.body}`,
        );
      } else {
        assert.equal(allowed.status, row.answers, `${op} with ${row.scope}: ${allowed.body}`);
      }
      if (row.read !== undefined) {
        const dry = await statusOf(await row.read(), only.get('read') as string);
        assert.ok(
          dry.status >= 200 && dry.status < 300,
          `${op} as a dry run with only read: ${dry.status} ${dry.body}`,
        );
        const wet = await statusOf(await row.sample(), only.get('read') as string);
        assert.equal(wet.status, 403, `${op} with only read: ${wet.body}`);
      }
    }
  });

  describe('keys limited to some locations', () => {
    /** Operations that act on the whole workspace: a key with a location limit is refused them. */
    const WHOLE_WORKSPACE = new Set([
      'POST /v1/locations',
      'GET /v1/audit',
      'POST /v1/webhooks',
      'GET /v1/webhooks',
      'GET /v1/webhooks/{id}',
      'PATCH /v1/webhooks/{id}',
      'DELETE /v1/webhooks/{id}',
      'GET /v1/webhooks/{id}/deliveries',
    ]);
    /** Lists: they answer 200 with what the key may see. */
    const LISTS = new Set([
      'GET /v1/locations',
      'GET /v1/transfers',
      'GET /v1/jobs',
      'GET /v1/shares',
      'GET /v1/sends',
      'GET /v1/schedules',
      'GET /v1/tokens',
      'GET /v1/key',
      'GET /v1/events',
      // The same for every key: it names no location.
      'GET /v1/providers',
    ]);

    /** A key of w's workspace limited to `locations`, with every scope. */
    async function limitedTo(w: World, locations: string[]): Promise<string> {
      const made = await w.post('/v1/tokens', { name: unique('limited'), locations });
      assert.deepEqual(made.locations, locations);
      return made.token as string;
    }

    test('a key limited to one location gets 404 for every operation on another (403 for the whole workspace), and the lists leave the other out', async () => {
      // w is the other location's world: every sample names it or work on it; the key is limited to a
      // location of the same workspace that none of them touches.
      const w = await world();
      const mine = await w.newLocation();
      const token = await limitedTo(w, [mine]);
      // Work on the other location, made by an unlimited key, for the lists to leave out.
      await Promise.all([w.copy(), w.single(), w.share(), w.send(), w.schedule()]);
      const rows = table(w);
      for (const [op, row] of Object.entries(rows)) {
        const { status, body } = await statusOf(await row.sample(), token);
        if (WHOLE_WORKSPACE.has(op)) {
          assert.equal(status, 403, `${op}: ${body}`);
          assert.match(body, /limited to some locations/, op);
        } else if (op === 'POST /v1/tokens') {
          // A key it makes inherits its limit.
          assert.equal(status, 201, `${op}: ${body}`);
          assert.deepEqual(JSON.parse(body).locations, [mine]);
        } else if (LISTS.has(op)) {
          assert.equal(status, 200, `${op}: ${body}`);
          assert.doesNotMatch(
            body,
            new RegExp(`${w.loc.id}|${w.loc.label}`),
            `${op} shows the other location`,
          );
        } else {
          assert.equal(status, 404, `${op}: ${status} ${body}`);
        }
      }
      // The lists could have shown it: an unlimited key's do.
      for (const url of [
        '/v1/locations',
        '/v1/transfers',
        '/v1/jobs',
        '/v1/shares',
        '/v1/sends',
        '/v1/schedules',
      ]) {
        const res = await w.call({ method: 'GET', url });
        assert.match(res.body, new RegExp(`${w.loc.id}|${w.loc.label}`), `${url} of an unlimited key`);
      }
      // A key cannot make one beyond its own locations.
      const beyond = await t.request({
        method: 'POST',
        url: '/v1/tokens',
        payload: { name: unique('k'), locations: [mine, w.loc.id] },
        token,
      });
      assert.equal(beyond.statusCode, 404, beyond.body);
    });

    test('a key limited to the locations an operation names gets its answer, as an unlimited key does', async () => {
      const w = await world();
      const rows = table(w);
      for (const [op, row] of Object.entries(rows)) {
        const sample = await row.sample();
        // Limited to every location the workspace has now (the sample may have made one).
        const locations = (await w.call({ method: 'GET', url: '/v1/locations' })).json() as Array<{
          id: string;
        }>;
        const token = await limitedTo(
          w,
          locations.map((l) => l.id),
        );
        const { status, body } = await statusOf(sample, token);
        if (WHOLE_WORKSPACE.has(op)) assert.equal(status, 403, `${op}: ${body}`);
        // The key these samples make has no limit: a limited key may not see it, let alone change it.
        else if (op === 'PATCH /v1/tokens/{id}' || op === 'DELETE /v1/tokens/{id}')
          assert.equal(status, 404, `${op}: ${body}`);
        else if (row.answers !== undefined) assert.equal(status, row.answers, `${op}: ${body}`);
        else assert.ok(status >= 200 && status < 300, `${op}: ${status} ${body}`);
      }
    });

    test('tokens: locations are ids of the workspace, shown on the key; a limited key sees only keys within its limit', async () => {
      const w = await world();
      const other = await w.newLocation();
      for (const bad of [{ locations: [] }, { locations: ['nope'] }, { locations: [other, other] }]) {
        const res = await w.call({
          method: 'POST',
          url: '/v1/tokens',
          payload: { name: unique('k'), ...bad },
        });
        assert.equal(res.statusCode, 400, `${JSON.stringify(bad)}: ${res.body}`);
      }
      const unknown = await w.call({
        method: 'POST',
        url: '/v1/tokens',
        payload: { name: unique('k'), locations: ['00000000-0000-4000-8000-000000000000'] },
      });
      assert.equal(unknown.statusCode, 404, unknown.body);
      const token = await limitedTo(w, [w.loc.id]);
      const self = (await t.request({ method: 'GET', url: '/v1/key', token })).json();
      assert.deepEqual(self.locations, [w.loc.id]);
      const unlimited = (await w.call({ method: 'GET', url: '/v1/key' })).json();
      assert.equal(unlimited.locations, undefined);
      const listed = (await t.request({ method: 'GET', url: '/v1/tokens', token })).json() as Array<{
        id: string;
      }>;
      assert.deepEqual(
        listed.map((k) => k.id),
        [self.id],
        'neither the unlimited key nor one limited elsewhere',
      );
      const revoke = await t.request({ method: 'DELETE', url: `/v1/tokens/${unlimited.id}`, token });
      assert.equal(revoke.statusCode, 404, revoke.body);
    });

    test("the event stream sends only the changes of the key's locations", async () => {
      const w = await world();
      const since = new Date(Date.now() - 1000).toISOString();
      const theirs = await w.copy();
      const mine = await w.newLocation();
      const bucket = await seedBucket(client, { 'in/x.txt': 'x-ray' });
      const label = (
        (await w.call({ method: 'POST', url: '/v1/locations/get', payload: { id: mine } })).json() as {
          label: string;
        }
      ).label;
      const own = await w.post('/v1/copy', { from: `${label}:${bucket}/in/`, to: `${label}:${bucket}/out/` });
      const token = await limitedTo(w, [mine]);
      const stream = await openEvents(await base(), token, `?since=${encodeURIComponent(since)}`);
      assert.equal(stream.status, 200);
      await waitUntil(() => stream.events.some((e) => e.data.job_id === own.job_id), { what: 'its own job' });
      stream.close();
      const text = JSON.stringify(stream.events);
      assert.match(text, new RegExp(own.job_id), 'its own job');
      assert.doesNotMatch(text, new RegExp(theirs.job_id), "the other location's job");
    });
  });

  test("a remove plan's run needs remove, a copy plan's transfer", async () => {
    const w = await world();
    const removal = await w.plan({ path: `${w.loc.label}/${w.bucket}/rm/**` });
    const copying = await w.plan({
      from: `${w.loc.label}:${w.bucket}/in/`,
      to: `${w.loc.label}:${w.bucket}/q/`,
    });
    const transferOnly = await w.keyWith(['transfer']);
    const removeOnly = await w.keyWith(['remove']);
    const run = (id: string, token: string) =>
      t.request({ method: 'POST', url: `/v1/plans/${id}/run`, token });
    const refused = await run(removal.plan_id, transferOnly);
    assert.equal(refused.statusCode, 403, refused.body);
    assert.match(refused.json().message, /"remove" scope/);
    assert.equal((await run(copying.plan_id, removeOnly)).statusCode, 403);
    assert.equal((await run(removal.plan_id, removeOnly)).statusCode, 202);
    assert.equal((await run(copying.plan_id, transferOnly)).statusCode, 202);
  });

  describe('keys made by keys', () => {
    test('a key creates keys only within its scopes: more is 403 naming what it lacks, none asked is its own', async () => {
      const w = await world();
      const admin = await w.keyWith(['read', 'admin']);
      const create = (payload: Record<string, unknown>, token = admin) =>
        t.request({ method: 'POST', url: '/v1/tokens', payload: { name: unique('k'), ...payload }, token });
      const beyond = await create({ scopes: ['read', 'transfer', 'remove'] });
      assert.equal(beyond.statusCode, 403, beyond.body);
      assert.match(beyond.json().message, /own scopes.*"transfer", "remove"/);
      const within = await create({ scopes: ['read'] });
      assert.equal(within.statusCode, 201, within.body);
      assert.deepEqual(within.json().scopes, ['read']);
      const inherited = await create({});
      assert.deepEqual(inherited.json().scopes, ['read', 'admin']);
      const listed = (await t.request({ method: 'GET', url: '/v1/tokens', token: admin })).json() as Array<{
        id: string;
        scopes: string[];
      }>;
      assert.deepEqual(listed.find((k) => k.id === within.json().id)?.scopes, ['read']);
      // The key's own view.
      const self = await t.request({ method: 'GET', url: '/v1/key', token: within.json().token });
      assert.deepEqual(self.json().scopes, ['read']);
      assert.equal(self.json().id, within.json().id);
      assert.equal(self.json().token, undefined);
      for (const bad of [
        { scopes: [] },
        { scopes: ['everything'] },
        { scopes: ['read', 'read'] },
        { scopes: 'read' },
      ]) {
        const res = await create(bad);
        assert.equal(res.statusCode, 400, `${JSON.stringify(bad)}: ${res.body}`);
      }
    });
  });

  test('the check runs before the body is validated: a key without the scope learns nothing of the rules', async () => {
    const w = await world();
    const readOnly = await w.keyWith(['read']);
    const res = await t.request({
      method: 'POST',
      url: '/v1/copy',
      payload: { nonsense: true },
      token: readOnly,
    });
    assert.equal(res.statusCode, 403, res.body);
    assert.doesNotMatch(res.body, /nonsense|required/);
  });
});
