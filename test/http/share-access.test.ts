// docs/api.md "Share links" (the access log) and "Audit log": a counted download of a link records
// share.download in the share's workspace (status 200 or 206, target the share) and a row of
// GET /v1/shares/{id}/downloads (time, address, bytes, completed), finished when the answer ends or is
// cut; a wrong password records share.password_failed (401). Both databases, files on a real s3rver.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { type Call, createLocation, newWorkspace, s3Client, seedBucket } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

const SMALL = randomBytes(50_000);
const LARGE = randomBytes(16 * 1024 * 1024);

await eachDatabase('share access log', (database) => {
  const clock = new ManualClock(Date.now());
  let t: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let call: Call;
  let label: string;
  let bucket: string;

  before(async () => {
    s3 = await startS3rver();
    client = s3Client(s3.endpoint);
    t = await startTestApp(database, { clock, env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' } });
    call = await newWorkspace(t);
    const location = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
      metadata: { endpoint: s3.endpoint },
    });
    label = location.label;
    bucket = await seedBucket(client, { 'small.bin': SMALL, 'large.bin': LARGE });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await s3.close();
  });

  async function share(payload: Record<string, unknown>): Promise<{ id: string; path: string }> {
    const res = await call({ method: 'POST', url: '/share', payload });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    return { id: body.id, path: new URL(body.url).pathname };
  }
  const audit = async (action: string, target: string) =>
    (
      (await call({ method: 'GET', url: `/v1/audit?action=${action}` })).json().events as Array<
        Record<string, unknown>
      >
    ).filter((e) => e.target === target);
  /** The share's downloads once each has ended (the row is finished after the answer). */
  async function downloads(id: string, count: number) {
    let last = '';
    return waitUntil(
      async () => {
        const res = await call({ method: 'GET', url: `/v1/shares/${id}/downloads` });
        assert.equal(res.statusCode, 200, res.body);
        last = res.body;
        const rows = res.json().downloads as Array<Record<string, unknown>>;
        return rows.length >= count && rows.every((r) => r.ended_at !== undefined) ? rows : undefined;
      },
      { what: `${count} finished downloads of ${id}`, detail: () => last },
    );
  }

  test('a download records share.download in the workspace and a finished access row with its bytes; a range from 0 is 206', async () => {
    const { id, path } = await share({ file: `${label}/${bucket}/small.bin` });
    const whole = await t.app.inject({
      method: 'GET',
      url: path,
      remoteAddress: '203.0.113.5',
      headers: { 'user-agent': 'fetcher/2' },
    });
    assert.equal(whole.statusCode, 200);
    assert.equal(whole.rawPayload.length, SMALL.length);
    clock.advance(1000);
    const part = await t.app.inject({
      method: 'GET',
      url: path,
      remoteAddress: '203.0.113.6',
      headers: { range: 'bytes=0-99' },
    });
    assert.equal(part.statusCode, 206);
    // HEAD counts nothing and records nothing.
    await t.app.inject({ method: 'HEAD', url: path, remoteAddress: '203.0.113.7' });

    const rows = await downloads(id, 2);
    assert.equal(rows.length, 2);
    const [second, first] = rows;
    assert.deepEqual(
      { ip: first?.ip, status: first?.status, bytes: first?.bytes, completed: first?.completed },
      { ip: '203.0.113.5', status: 200, bytes: SMALL.length, completed: true },
    );
    assert.deepEqual(
      { ip: second?.ip, status: second?.status, bytes: second?.bytes, completed: second?.completed },
      { ip: '203.0.113.6', status: 206, bytes: 100, completed: true },
    );
    const events = await audit('share.download', id);
    assert.deepEqual(
      events.map((e) => [e.status, e.ip, e.user_agent ?? null, e.key_id ?? null]),
      [
        [206, '203.0.113.6', 'lightMyRequest', null],
        [200, '203.0.113.5', 'fetcher/2', null],
      ],
    );
    // The share's own count agrees with the log.
    const listed = (await call({ method: 'GET', url: '/v1/shares' }))
      .json()
      .shares.find((s: { id: string }) => s.id === id);
    assert.equal(listed.downloads, 2);
  });

  test('a download cut by the client is recorded as not completed, with the bytes that went', async () => {
    const { id, path } = await share({ file: `${label}/${bucket}/large.bin` });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    await new Promise<void>((resolve, reject) => {
      const req = httpGet({ host: '127.0.0.1', port, path }, (res) => {
        assert.equal(res.statusCode, 200);
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err) => {
        if (!req.destroyed) reject(err);
      });
      req.end();
    });
    const [row] = await downloads(id, 1);
    assert.equal(row?.completed, false);
    assert.ok(Number(row?.bytes) < LARGE.length, `${row?.bytes} bytes of ${LARGE.length}`);
  });

  test("a wrong password records share.password_failed (401) in the share's workspace; the right one does not", async () => {
    const password = `pw-${randomBytes(6).toString('hex')}`;
    const { id, path } = await share({ file: `${label}/${bucket}/small.bin`, password });
    const post = (value: string) =>
      t.app.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'guesser/1' },
        payload: new URLSearchParams({ password: value }).toString(),
        remoteAddress: '203.0.113.9',
      });
    assert.equal((await post('not it')).statusCode, 401);
    assert.equal((await post(password)).statusCode, 200);
    const failed = await audit('share.password_failed', id);
    assert.equal(failed.length, 1);
    assert.deepEqual(
      { status: failed[0]?.status, ip: failed[0]?.ip, ua: failed[0]?.user_agent },
      { status: 401, ip: '203.0.113.9', ua: 'guesser/1' },
    );
    assert.ok(!JSON.stringify(failed).includes(password) && !JSON.stringify(failed).includes('not it'));
    assert.equal((await audit('share.download', id)).length, 1, 'the right password downloaded');
  });

  test("another workspace's share, or an unknown one, has no downloads to read (404)", async () => {
    const { id } = await share({ file: `${label}/${bucket}/small.bin` });
    const other = await newWorkspace(t);
    assert.equal((await other({ method: 'GET', url: `/v1/shares/${id}/downloads` })).statusCode, 404);
    assert.equal(
      (await call({ method: 'GET', url: '/v1/shares/00000000-0000-4000-8000-000000000000/downloads' }))
        .statusCode,
      404,
    );
  });
});
