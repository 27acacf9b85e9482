// docs/api.md "Input" through HTTP on both databases: every string a caller sends has a bounded length and
// can be stored on both (no U+0000, which PostgreSQL text cannot hold; no lone surrogate, which has no
// UTF-8 form); names take no control character; bodies and metadata are nested a bounded depth; a long
// scheduledAt is refused before the date parser reads it. Each refusal is a 400 in the standard shape,
// and nothing is stored.
import assert from 'node:assert/strict';
import { after, before, mock, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import * as chrono from 'chrono-node';
import type { LightMyRequestResponse } from 'fastify';
import type { Database } from '../../src/db/schema.js';
import { wholeWorkspace } from '../../src/domain/caller.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, secretFor, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { TestSmtp } from '../support/smtp.js';
import { type Call, createLocation, newWorkspace, s3Client, seedBucket } from '../support/transfers.js';

const TABLES = ['locations', 'api_keys', 'transfers', 'jobs', 'shares', 'sends', 'webhooks'] as const;

function assert400(res: LightMyRequestResponse, field: RegExp, what: string): void {
  assert.equal(res.statusCode, 400, `${what}: ${res.body}`);
  const body = res.json() as { error: unknown; message: unknown };
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], what);
  assert.equal(body.error, 400, what);
  assert.match(String(body.message), field, what);
}

await eachDatabase('input limits', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let smtp: TestSmtp;
  let call: Call;
  let label: string;
  let locationId: string;
  let bucket: string;
  let keyId: string;

  before(async () => {
    [s3, smtp] = await Promise.all([startS3rver(), new TestSmtp().start()]);
    client = s3Client(s3.endpoint);
    t = await startTestApp(database, {
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_SMTP_URL: smtp.url },
    });
    call = await newWorkspace(t);
    ({ id: locationId, label } = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKIDINPUT', secret_access_key: 'input-secret' },
      metadata: { endpoint: s3.endpoint },
    }));
    bucket = await seedBucket(client, { 'f.txt': 'F', x_y: 'XY' });
    const key = await call({ method: 'POST', url: '/v1/tokens', payload: { name: 'input' } });
    assert.equal(key.statusCode, 201, key.body);
    keyId = key.json().id;
  });
  after(async () => {
    await t.close();
    client.destroy();
    await Promise.all([s3.close(), smtp.close()]);
  });

  async function counts(): Promise<Record<string, number>> {
    const db = t.services.db.kysely;
    const out: Record<string, number> = {};
    for (const table of TABLES) {
      const row = await db
        .selectFrom(table as keyof Database)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      out[table] = Number(row.n);
    }
    return out;
  }

  /** One request per field, with `char` in that field. */
  function cases(char: string) {
    const fill = (s: string) => s.replaceAll('~', char);
    return [
      {
        what: 'location label',
        field: /body\.label/,
        url: '/v1/locations',
        method: 'POST' as const,
        payload: { provider: 's3', label: fill('a~b'), secret: secretFor('s3') },
      },
      {
        what: 'new label',
        field: /body\.label/,
        url: '/v1/locations',
        method: 'PATCH' as const,
        payload: { id: locationId, label: fill(`${label}~`) },
      },
      {
        what: 'location name',
        field: /body\.name/,
        url: '/v1/locations/get',
        method: 'POST' as const,
        payload: { name: fill('a~b') },
      },
      {
        what: 'token name',
        field: /body\.name/,
        url: '/v1/tokens',
        method: 'POST' as const,
        payload: { name: fill('k~') },
      },
      {
        what: 'token rename',
        field: /body\.name/,
        url: `/v1/tokens/${keyId}`,
        method: 'PATCH' as const,
        payload: { name: fill('k~') },
      },
      {
        what: 'share file',
        field: /body\.file/,
        url: '/share',
        method: 'POST' as const,
        payload: { file: fill(`${label}/${bucket}/x~y`) },
      },
      {
        what: 'send text',
        field: /body\.text/,
        url: '/send',
        method: 'POST' as const,
        payload: { source: `${label}/${bucket}/f.txt`, to: 'ann@example.com', text: fill('hi~there') },
      },
      {
        what: 'send source',
        field: /body\.source/,
        url: '/send',
        method: 'POST' as const,
        payload: { source: fill(`${label}/${bucket}/x~y`), to: 'ann@example.com' },
      },
      {
        what: 'send to',
        field: /body\.to/,
        url: '/send',
        method: 'POST' as const,
        payload: { source: `${label}/${bucket}/f.txt`, to: fill('a~@example.com') },
      },
      {
        what: 'move to',
        field: /body\.to/,
        url: '/move',
        method: 'POST' as const,
        payload: { from: `${label}/${bucket}/f.txt`, to: fill(`${label}/${bucket}/g~h`) },
      },
      {
        what: 'pull to',
        field: /body\.to/,
        url: '/pull',
        method: 'POST' as const,
        payload: { from: 'http://127.0.0.1:9/file', to: fill(`${label}/${bucket}/p~q`) },
      },
      {
        what: 'remove path',
        field: /body\.path/,
        url: '/remove',
        method: 'POST' as const,
        payload: { path: fill(`${label}/${bucket}/x~y`) },
      },
      {
        what: 'remove paths',
        field: /body\.path\.1/,
        url: '/remove',
        method: 'POST' as const,
        payload: { path: [`${label}/${bucket}/f.txt`, fill(`${label}/${bucket}/x~y`)] },
      },
      {
        what: 'copy target',
        field: /body\.to/,
        url: '/v1/copy',
        method: 'POST' as const,
        payload: { from: `${label}:${bucket}/f.txt`, to: { id: locationId, path: fill(`${bucket}/c~d`) } },
      },
    ];
  }

  test('U+0000 in a label, name, token name, share file, send text, source or address, move, pull or remove path, or copy target: 400 naming the field, nothing stored', async () => {
    const before = await counts();
    for (const c of cases('\u0000')) {
      const res = await call({ method: c.method, url: c.url, payload: c.payload });
      assert400(res, c.field, c.what);
    }
    assert.deepEqual(await counts(), before, 'nothing stored');
    // The same requests without the NUL get past the field: never 400 about it, never 5xx.
    for (const c of cases('_')) {
      const res = await call({ method: c.method, url: c.url, payload: c.payload });
      assert.ok(res.statusCode < 500, `${c.what}: ${res.body}`);
      if (res.statusCode === 400) assert.doesNotMatch(res.json().message, c.field, c.what);
    }
    const back = await call({ method: 'PATCH', url: '/v1/locations', payload: { id: locationId, label } });
    assert.equal(back.statusCode, 200, back.body);
  });

  test('a lone surrogate in any string, a list path or a label among them: 400 naming the field, nothing stored', async () => {
    const before = await counts();
    for (const c of cases('\ud800')) {
      const res = await call({ method: c.method, url: c.url, payload: c.payload });
      assert400(res, c.field, c.what);
      assert.match(res.json().message, /lone surrogate/, c.what);
    }
    const list = await call({
      method: 'POST',
      url: '/v1/list',
      payload: { id: locationId, path: `${bucket}/\udc00` },
    });
    assert400(list, /body\.path .*lone surrogate/, 'list path');
    // Inside objects no schema describes (a secret, metadata), and in a field name.
    const secret = await call({
      method: 'POST',
      url: '/v1/locations',
      payload: { provider: 's3', label: 'ok', secret: { access_key_id: 'a\udbff', secret_access_key: 'b' } },
    });
    assert400(secret, /body\.secret\.access_key_id .*lone surrogate/, 'secret');
    const key = await call({
      method: 'POST',
      url: '/v1/locations',
      payload: { provider: 's3', label: 'ok', secret: secretFor('s3'), metadata: { 'r\ud800': 'x' } },
    });
    assert400(key, /body\.metadata .*lone surrogate/, 'metadata key');
    // A whole pair (an emoji) is a character like any other.
    const pair = await call({ method: 'POST', url: '/v1/tokens', payload: { name: 'key \ud83d\ude80' } });
    assert.equal(pair.statusCode, 201, pair.body);
    assert.equal(pair.json().name, 'key \ud83d\ude80');
    assert.equal((await counts()).api_keys, (before.api_keys ?? 0) + 1, 'only the well-formed key stored');
  });

  test('control characters: refused in names, addresses, zones and times; tab and line breaks kept in text; paths keep them', async () => {
    for (const [payload, field] of [
      [
        { provider: 's3', label: 'tab\there', secret: secretFor('s3') },
        /body\.label must not contain control/,
      ],
      [
        { provider: 's3', label: 'del\u007f', secret: secretFor('s3') },
        /body\.label must not contain control/,
      ],
    ] as const) {
      assert400(
        await call({ method: 'POST', url: '/v1/locations', payload }),
        field,
        JSON.stringify(payload),
      );
    }
    const send = (extra: Record<string, unknown>) =>
      call({
        method: 'POST',
        url: '/send',
        payload: { source: `${label}/${bucket}/f.txt`, to: 'ann@example.com', ...extra },
      });
    assert400(
      await send({ to: 'ann @example.com' }),
      /to: "ann @example.com" is not an e-mail address/,
      'space',
    );
    assert400(await send({ cc: ['b@example.com', 'a\u001b@example.com'] }), /body\.cc\.1/, 'ESC in cc');
    assert400(await send({ timezone: 'Europe/Paris\n' }), /body\.timezone/, 'zone');
    assert400(await send({ scheduledAt: 'tomorrow\u0000' }), /body\.scheduledAt/, 'time');
    const multiLine = await send({ text: 'Hello,\r\n\tthe report.\n' });
    assert.equal(multiLine.statusCode, 202, multiLine.body);
    // A path keeps every character a store may hold, a tab among them (docs/api.md, "Copy": paths are exact bytes).
    const remove = await call({
      method: 'POST',
      url: '/remove',
      payload: { path: `${label}/${bucket}/a\tb` },
    });
    assert.equal(remove.statusCode, 202, remove.body);
  });

  test('"a\\u0000@example.com" is refused by the domain too, not mailed to a@example.com', async () => {
    // The schema refuses it first (above); Sends itself must as well, for any caller but HTTP.
    const before = await counts();
    await assert.rejects(
      t.services.sends.accept(wholeWorkspace('nobody'), {
        source: `${label}/${bucket}/f.txt`,
        to: 'a\u0000@example.com',
      }),
      (err: Error) => /is not an e-mail address/.test(err.message),
    );
    assert.deepEqual(await counts(), before);
  });

  test('every string field has a maximum length: one character more is 400 naming the field', async () => {
    const over = (n: number) => 'a'.repeat(n + 1);
    const checks: Array<[string, string, Record<string, unknown>, RegExp]> = [
      [
        'POST',
        '/v1/locations',
        { provider: 's3', label: over(256), secret: secretFor('s3') },
        /body\.label must NOT have more than 256/,
      ],
      ['POST', '/v1/tokens', { name: over(256) }, /body\.name must NOT have more than 256/],
      ['POST', '/v1/list', { id: locationId, path: over(4096) }, /body\.path must NOT have more than 4096/],
      ['POST', '/remove', { path: over(4096) }, /body\.path must NOT have more than 4096/],
      [
        'POST',
        '/pull',
        { from: `http://127.0.0.1/${over(8192)}`, to: `${label}/${bucket}/x` },
        /body\.from must NOT have more than 8192/,
      ],
      [
        'POST',
        '/send',
        { source: 'x/y', to: `${over(243)}@example.com` },
        /body\.to must NOT have more than 254/,
      ],
      [
        'POST',
        '/send',
        { source: 'x/y', to: 'a@example.com', text: over(10_000) },
        /body\.text must NOT have more than 10000/,
      ],
      [
        'POST',
        '/send',
        { source: 'x/y', to: 'a@example.com', timezone: over(64) },
        /body\.timezone must NOT have more than 64/,
      ],
      [
        'POST',
        '/v1/webhooks',
        { url: `https://example.com/${over(2048)}`, events: ['send.sent'] },
        /body\.url must NOT have more than 2048/,
      ],
      [
        'POST',
        '/remove',
        { path: Array.from({ length: 1001 }, (_, i) => `${label}/${bucket}/${i}`) },
        /body\.path must NOT have more than 1000 items/,
      ],
    ];
    const before = await counts();
    for (const [method, url, payload, field] of checks) {
      assert400(await call({ method: method as 'POST', url, payload }), field, url);
    }
    const cursor = await call({ method: 'GET', url: `/v1/transfers?cursor=${over(256)}` });
    assert400(cursor, /querystring\.cursor must NOT have more than 256/, 'cursor');
    assert.deepEqual(await counts(), before);
  });

  test('a 1 MB and a 100,000-character scheduledAt are answered 400 with nothing given to the date parser, and /healthz answers meanwhile', async () => {
    // What chrono-node is given to read, counted rather than timed: its cost grows with the text.
    const reads = mock.method(chrono.casual, 'parse');
    const send = (scheduledAt: string) =>
      call({
        method: 'POST',
        url: '/send',
        payload: { source: `${label}/${bucket}/f.txt`, to: 'ann@example.com', scheduledAt },
      });
    try {
      for (const length of [1_000_000, 100_000]) {
        const [answer, healthz] = await Promise.all([
          send(`in ${'9'.repeat(length)} minutes`),
          t.app.inject({ method: 'GET', url: '/healthz' }),
        ]);
        assert.equal(reads.mock.callCount(), 0, `chrono read none of ${length} characters`);
        assert400(answer, /body\.scheduledAt must NOT have more than 100 characters/, `${length}`);
        assert.equal(healthz.statusCode, 200);
      }
      // A scheduledAt of an accepted length is read, once, as it was sent: the count counts.
      assert400(await send('in 366 days'), /scheduledAt must be at most a year ahead/, 'in 366 days');
      assert.deepEqual(
        reads.mock.calls.map((read) => read.arguments[0]),
        ['in 366 days'],
      );
    } finally {
      reads.mock.restore();
    }
  });

  test('more than a year ahead is 400, in words and in ISO 8601 (expanded years too)', async () => {
    const before = await counts();
    for (const scheduledAt of [
      'in 366 days',
      '+275760-09-13T00:00:00Z',
      '+012027-01-01',
      new Date(Date.now() + 366 * 24 * 3600_000).toISOString(),
    ]) {
      const res = await call({
        method: 'POST',
        url: '/send',
        payload: { source: `${label}/${bucket}/f.txt`, to: 'ann@example.com', scheduledAt },
      });
      assert400(
        res,
        /scheduledAt (must be at most a year ahead|.* is not a valid ISO 8601 time)/,
        scheduledAt,
      );
    }
    assert.deepEqual(await counts(), before);
    const inAYear = await call({
      method: 'POST',
      url: '/send',
      payload: { source: `${label}/${bucket}/f.txt`, to: 'ann@example.com', scheduledAt: 'in 364 days' },
    });
    assert.equal(inAYear.statusCode, 202, inAYear.body);
  });

  test('metadata nested 5,000 levels is 400, and so is 33; 32 is stored; the whole body is held to 64', async () => {
    const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    const create = (metadata: string) =>
      call({
        method: 'POST',
        url: '/v1/locations',
        headers: { 'content-type': 'application/json' },
        payload: `{"provider":"s3","label":"${unique('deep')}","secret":${JSON.stringify(secretFor('s3'))},"metadata":${metadata}}`,
      });
    const before = await counts();
    assert400(await create(nested(5000)), /nested at most 64 levels/, '5,000');
    assert400(await create(nested(33)), /metadata must be nested at most 32 levels/, '33');
    const replace = await call({
      method: 'PUT',
      url: '/v1/locations',
      headers: { 'content-type': 'application/json' },
      payload: `{"id":"${locationId}","secret":${JSON.stringify(secretFor('s3'))},"metadata":{"endpoint":"${s3.endpoint}","x":${nested(40)}}}`,
    });
    assert400(replace, /metadata must be nested at most 32 levels/, 'replace');
    assert.deepEqual(await counts(), before, 'nothing stored');
    const ok = await create(`{"x":${nested(31)}}`);
    assert.equal(ok.statusCode, 201, ok.body);
  });

  test('a key file given as a JSON string nested 8,000 levels, or a secret field over 16 KiB, is 422, not a 500', async () => {
    const before = await counts();
    // Arrays nest one level a character: 8,000 levels fit in the 16 KiB a secret field may hold.
    const deep = `${'['.repeat(8000)}${']'.repeat(8000)}`;
    const keyFile = `{"type":"service_account","client_email":"a@b.iam.gserviceaccount.com","private_key":"k","x":${deep}}`;
    const gcs = await call({
      method: 'POST',
      url: '/v1/locations',
      payload: { provider: 'gcs', label: 'deep', secret: { service_account_json: keyFile } },
    });
    assert.equal(gcs.statusCode, 422, gcs.body);
    assert.match(gcs.json().message, /service_account_json must be nested at most 32 levels/);
    const long = await call({
      method: 'POST',
      url: '/v1/locations',
      payload: {
        provider: 's3',
        label: 'long',
        secret: { access_key_id: 'a'.repeat(16 * 1024 + 1), secret_access_key: 'b' },
      },
    });
    assert.equal(long.statusCode, 422, long.body);
    assert.match(long.json().message, /secret\.access_key_id must be at most 16384 characters/);
    assert.deepEqual(await counts(), before);
  });

  test('every string and array of every request in /openapi.json has a maximum', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    interface Operation {
      parameters?: Array<{ name: string; in: string; schema: Schema }>;
      requestBody?: { content: Record<string, { schema: Schema }> };
    }
    type Schema = Record<string, unknown>;
    const missing: string[] = [];
    let strings = 0;
    const walk = (schema: unknown, where: string) => {
      const stack: Array<[unknown, string]> = [[schema, where]];
      for (let next = stack.pop(); next; next = stack.pop()) {
        const [node, at] = next;
        if (node === null || typeof node !== 'object') continue;
        const s = node as Schema;
        if (s.type === 'string') {
          strings++;
          if (typeof s.maxLength !== 'number') missing.push(`${at}: string without maxLength`);
        }
        if (s.type === 'array' && typeof s.maxItems !== 'number')
          missing.push(`${at}: array without maxItems`);
        for (const [key, child] of Object.entries(s)) {
          if (key === 'properties') {
            for (const [name, prop] of Object.entries(child as Schema)) stack.push([prop, `${at}.${name}`]);
          } else if (key === 'items' || key === 'additionalProperties') stack.push([child, `${at}[]`]);
          else if (key === 'anyOf' || key === 'oneOf' || key === 'allOf')
            for (const option of child as unknown[]) stack.push([option, at]);
        }
      }
    };
    let operations = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        operations++;
        for (const p of op.parameters ?? [])
          walk(p.schema, `${method.toUpperCase()} ${path} ${p.in}.${p.name}`);
        for (const [type, content] of Object.entries(op.requestBody?.content ?? {})) {
          walk(content.schema, `${method.toUpperCase()} ${path} body (${type})`);
        }
      }
    }
    assert.ok(operations > 30, `${operations} operations`);
    assert.ok(strings > 40, `${strings} string fields`);
    assert.deepEqual(missing, []);
  });
});
