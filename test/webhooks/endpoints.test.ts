// Webhook endpoints through HTTP on both databases (docs/webhooks.md, "Managing webhooks"): creation
// answers the whsec_ secret once, and no later answer, log line or stored column shows it; list, read,
// change, disable and re-enable, delete; every validation error is a 400 that says what is wrong; the
// per-workspace limit; workspaces do not see each other's endpoints; and /openapi.json lists the routes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';
import { type Call, newWorkspace } from '../support/transfers.js';

const URL = 'http://127.0.0.1:9/hook';
/** FERRY_MAX_WEBHOOKS's default. */
const WEBHOOKS_PER_WORKSPACE = loadConfig({}).rateLimits.caps.webhooks;

await eachDatabase('webhook endpoints', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' } });
  });
  after(async () => {
    await t?.close();
  });

  const create = (call: Call, payload: Record<string, unknown>) =>
    call({ method: 'POST', url: '/v1/webhooks', payload });

  test('creation answers 201 with a whsec_ secret once; list, read and change never show it', async () => {
    const call = await newWorkspace(t);
    const res = await create(call, { url: URL, events: ['job.complete', 'transfer.failed'] });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.equal(created.url, URL);
    assert.deepEqual(created.events, ['job.complete', 'transfer.failed']);
    assert.equal(created.status, 'enabled');
    const secret = created.secret as string;
    const secretBody = secret.slice('whsec_'.length);

    const got = await call({ method: 'GET', url: `/v1/webhooks/${created.id}` });
    assert.equal(got.statusCode, 200);
    const { secret: _shown, ...withoutSecret } = created;
    assert.deepEqual(got.json(), withoutSecret);
    const list = await call({ method: 'GET', url: '/v1/webhooks' });
    assert.deepEqual(list.json(), { webhooks: [withoutSecret] });
    const changed = await call({
      method: 'PATCH',
      url: `/v1/webhooks/${created.id}`,
      payload: { events: ['share.downloaded'] },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.deepEqual(changed.json().events, ['share.downloaded']);
    for (const body of [got.body, list.body, changed.body, t.logs.text]) {
      assert.ok(!body.includes(secretBody), 'the secret appears nowhere after creation');
    }
    const row = await t.services.db.kysely
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(secretBody), 'the stored row holds the secret sealed only');
  });

  test('PATCH disables and re-enables an endpoint; DELETE removes it (404 after)', async () => {
    const call = await newWorkspace(t);
    const id = (await create(call, { url: URL, events: ['job.failed'] })).json().id as string;
    const off = await call({ method: 'PATCH', url: `/v1/webhooks/${id}`, payload: { status: 'disabled' } });
    assert.equal(off.json().status, 'disabled');
    assert.equal(off.json().disabled_reason, 'disabled through the API');
    assert.ok(off.json().disabled_at);
    const on = await call({ method: 'PATCH', url: `/v1/webhooks/${id}`, payload: { status: 'enabled' } });
    assert.equal(on.json().status, 'enabled');
    assert.equal(on.json().disabled_reason, undefined);
    assert.equal(on.json().disabled_at, undefined);
    assert.equal((await call({ method: 'DELETE', url: `/v1/webhooks/${id}` })).statusCode, 204);
    assert.equal((await call({ method: 'GET', url: `/v1/webhooks/${id}` })).statusCode, 404);
    assert.equal((await call({ method: 'DELETE', url: `/v1/webhooks/${id}` })).statusCode, 404);
    assert.equal((await call({ method: 'GET', url: `/v1/webhooks/${id}/deliveries` })).statusCode, 404);
  });

  test('each validation error is a 400 that names the problem', async () => {
    const call = await newWorkspace(t);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ url: 'ftp://example.com/x', events: ['job.complete'] }, /url must be http or https/],
      [{ url: 'not a url', events: ['job.complete'] }, /url is not a URL/],
      [{ url: 'http://user:pw@127.0.0.1/x', events: ['job.complete'] }, /user name or password/],
      [{ url: URL, events: [] }, /events/],
      [{ url: URL, events: ['job.done'] }, /unknown event "job.done"; events are transfer.complete/],
      [{ url: URL }, /events/],
      [{ url: URL, events: ['job.complete'], extra: 1 }, /extra/],
      [
        { url: 'http://10.1.2.3/hook', events: ['job.complete'] },
        /url: egress to 10.1.2.3 .* private address/,
      ],
      [{ url: 'http://[::1]:8080/hook', events: ['job.complete'] }, /loopback address/],
    ];
    for (const [payload, message] of cases) {
      const res = await create(call, payload);
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
      assert.match(res.json().message, message, JSON.stringify(payload));
    }
    assert.deepEqual((await call({ method: 'GET', url: '/v1/webhooks' })).json(), { webhooks: [] });
    const id = (await create(call, { url: URL, events: ['job.complete'] })).json().id as string;
    const bad = await call({
      method: 'PATCH',
      url: `/v1/webhooks/${id}`,
      payload: { url: 'http://192.168.1.1/' },
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /private address/);
    const empty = await call({ method: 'PATCH', url: `/v1/webhooks/${id}`, payload: {} });
    assert.equal(empty.statusCode, 400);
    const limit = await call({ method: 'GET', url: `/v1/webhooks/${id}/deliveries?limit=0` });
    assert.equal(limit.statusCode, 400);
    const cursor = await call({ method: 'GET', url: `/v1/webhooks/${id}/deliveries?cursor=nonsense` });
    assert.equal(cursor.statusCode, 400);
    assert.match(cursor.json().message, /cursor is not valid/);
  });

  test('deliveries page by next_cursor newest first, attempts at one time by id, none twice or missed', async () => {
    const call = await newWorkspace(t);
    const id = (await create(call, { url: URL, events: ['job.complete'] })).json().id as string;
    // Five attempts, three of them in one millisecond: ties are ordered by id.
    const times = [5000, 7000, 7000, 7000, 9000];
    const rows = times.map((at, i) => ({
      id: `00000000-0000-4000-8000-00000000000${i}`,
      webhook_id: id,
      event_id: `00000000-0000-4000-8000-0000000000e${i}`,
      type: 'job.complete',
      attempt: 1,
      status_code: 200,
      error: null,
      duration_ms: 3,
      created_at: at,
    }));
    await t.services.db.kysely.insertInto('webhook_attempts').values(rows).execute();
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const res = await call({
        method: 'GET',
        url: `/v1/webhooks/${id}/deliveries?limit=2${cursor === undefined ? '' : `&cursor=${cursor}`}`,
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as { deliveries: { id: string }[]; next_cursor?: string };
      seen.push(...body.deliveries.map((d) => d.id));
      cursor = body.next_cursor;
      if (cursor === undefined) break;
    }
    const expected = [4, 1, 2, 3, 0].map((i) => rows[i]?.id);
    assert.deepEqual(seen, expected);
  });

  test(`a workspace may have ${WEBHOOKS_PER_WORKSPACE} endpoints; the next is 409`, async () => {
    const call = await newWorkspace(t);
    for (let i = 0; i < WEBHOOKS_PER_WORKSPACE; i++) {
      assert.equal((await create(call, { url: `${URL}/${i}`, events: ['job.complete'] })).statusCode, 201);
    }
    const over = await create(call, { url: URL, events: ['job.complete'] });
    assert.equal(over.statusCode, 409, over.body);
    assert.match(over.json().message, /at most 20 webhooks/);
  });

  test(`creations at once in one workspace stop at ${WEBHOOKS_PER_WORKSPACE}`, async () => {
    const call = await newWorkspace(t);
    const answers = await Promise.all(
      Array.from({ length: WEBHOOKS_PER_WORKSPACE + 10 }, (_, i) =>
        create(call, { url: `${URL}/${i}`, events: ['job.complete'] }),
      ),
    );
    const codes = answers.map((a) => a.statusCode);
    assert.equal(codes.filter((c) => c === 201).length, WEBHOOKS_PER_WORKSPACE, codes.join(','));
    assert.equal(codes.filter((c) => c === 409).length, 10, codes.join(','));
    assert.equal(
      (await call({ method: 'GET', url: '/v1/webhooks' })).json().webhooks.length,
      WEBHOOKS_PER_WORKSPACE,
    );
  });

  test("a workspace sees only its own endpoints: another's id is 404", async () => {
    const mine = await newWorkspace(t);
    const theirs = await newWorkspace(t);
    const id = (await create(theirs, { url: URL, events: ['job.complete'] })).json().id as string;
    assert.equal((await mine({ method: 'GET', url: `/v1/webhooks/${id}` })).statusCode, 404);
    assert.equal(
      (await mine({ method: 'PATCH', url: `/v1/webhooks/${id}`, payload: { status: 'disabled' } }))
        .statusCode,
      404,
    );
    assert.equal((await mine({ method: 'DELETE', url: `/v1/webhooks/${id}` })).statusCode, 404);
    assert.deepEqual((await mine({ method: 'GET', url: '/v1/webhooks' })).json(), { webhooks: [] });
  });

  test('/openapi.json describes the webhook routes with their schemas', async () => {
    const spec = (await t.request({ method: 'GET', url: '/openapi.json', token: null })).json();
    assert.ok(spec.paths['/v1/webhooks'].post.requestBody);
    assert.ok(spec.paths['/v1/webhooks'].post.responses['201']);
    assert.ok(spec.paths['/v1/webhooks'].get);
    assert.ok(spec.paths['/v1/webhooks/{id}'].get);
    assert.ok(spec.paths['/v1/webhooks/{id}'].patch);
    assert.ok(spec.paths['/v1/webhooks/{id}'].delete);
    assert.ok(spec.paths['/v1/webhooks/{id}/deliveries'].get.responses['200']);
  });
});
