// docs/api.md "Live progress": GET /v1/events over a real connection (fetch, as the console reads it)
// on both databases, with a worker in the process and s3rver behind the locations.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { wholeWorkspace } from '../../src/domain/caller.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { HEARTBEAT_MS, STREAMS_PER_WORKSPACE } from '../../src/http/routes/events.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { type EventClient, openEvents } from '../support/events.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { createLocation, s3Client, seedBucket } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

await eachDatabase('event stream', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let base: string;
  const open: EventClient[] = [];

  before(async () => {
    s3 = await startS3rver();
    client = s3Client(s3.endpoint);
    t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' }, worker: true });
    // Port 0: the system's choice, bound as it is chosen; listen() answers the address.
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    for (const stream of open) stream.close();
    await t.close();
    client.destroy();
    await s3.close();
  });

  async function events(token: string | null, query = ''): Promise<EventClient> {
    const stream = await openEvents(base, token, query);
    open.push(stream);
    return stream;
  }

  /** A workspace with its key and two locations on one s3rver account. */
  async function workspace() {
    const ws = await ensureWorkspace(t.services.db.kysely, unique('ws'), t.services.clock);
    const { token } = await t.services.apiKeys.create(ws.id, { name: 'test' });
    const call = (options: Parameters<TestApp['request']>[0]) => t.request({ ...options, token });
    const secret = { access_key_id: 'AKID', secret_access_key: 'secret' };
    const a = await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } });
    const b = await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } });
    return { token, call, a: a.id, b: b.id };
  }

  async function bulkCopy(w: Awaited<ReturnType<typeof workspace>>, keys: number): Promise<string> {
    const objects: Record<string, string> = {};
    for (let i = 0; i < keys; i++) objects[`in/k${i}.txt`] = `object ${i}`.repeat(100);
    const bucket = await seedBucket(client, objects);
    const res = await w.call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${w.a}:${bucket}/in/`, to: `${w.b}:${bucket}/out/` },
    });
    assert.equal(res.statusCode, 202, res.body);
    return res.json().job_id as string;
  }

  const jobEvents = (stream: EventClient, id: string) =>
    stream.events.filter((e) => e.event === 'job' && e.data.job_id === id);

  test('a bulk copy reaches complete on the stream with its counters, woken by the worker, not the heartbeat', async () => {
    const w = await workspace();
    const stream = await events(w.token);
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(stream.headers.get('cache-control'), 'no-store');
    await waitUntil(() => stream.comments.includes('open'), { what: 'the opening comment' });
    const id = await bulkCopy(w, 5);
    // Well inside one heartbeat: the read that sees the end is the one the worker's wake-up caused.
    const done = await waitUntil(() => jobEvents(stream, id).find((e) => e.data.status === 'complete'), {
      what: 'the job complete on the stream',
      timeoutMs: HEARTBEAT_MS * 0.6,
      detail: () => JSON.stringify(jobEvents(stream, id)),
    });
    assert.deepEqual(done.data.counts, {
      total: 5,
      pending: 0,
      succeeded: 5,
      skipped: 0,
      failed: 0,
      deleted: 0,
      size_only: 0,
    });
    assert.equal(done.data.bytes_done, 5 * 'object 0'.length * 100);
    // The same JSON as the GET of the job.
    const get = await w.call({ method: 'GET', url: `/v1/jobs/${id}` });
    assert.deepEqual(done.data, get.json());
    // Each state is sent once: no two events in a row for this job carry the same data.
    const sent = jobEvents(stream, id).map((e) => JSON.stringify(e.data));
    assert.equal(new Set(sent).size, sent.length, sent.join('\n'));
  });

  test("a workspace's stream never carries another workspace's work", async () => {
    const [w1, w2] = [await workspace(), await workspace()];
    const [s1, s2] = [await events(w1.token), await events(w2.token)];
    await waitUntil(() => s1.comments.includes('open') && s2.comments.includes('open'), {
      what: 'both open',
    });
    const [j1, j2] = [await bulkCopy(w1, 2), await bulkCopy(w2, 3)];
    await waitUntil(() => jobEvents(s1, j1).some((e) => e.data.status === 'complete'), {
      what: 'job 1 on s1',
    });
    await waitUntil(() => jobEvents(s2, j2).some((e) => e.data.status === 'complete'), {
      what: 'job 2 on s2',
    });
    const ids = (s: EventClient) => new Set(s.events.map((e) => String(e.data.job_id ?? e.data.id)));
    assert.deepEqual([...ids(s1)], [j1]);
    assert.deepEqual([...ids(s2)], [j2]);
  });

  test('without a key the stream is 401; past the per-workspace limit 429', async () => {
    const none = await events(null);
    assert.equal(none.status, 401);
    const w = await workspace();
    const streams: EventClient[] = [];
    for (let i = 0; i < STREAMS_PER_WORKSPACE; i++) streams.push(await events(w.token));
    assert.deepEqual(
      streams.map((s) => s.status),
      streams.map(() => 200),
    );
    const over = await events(w.token);
    assert.equal(over.status, 429);
    assert.ok(Number(over.headers.get('retry-after')) >= 1);
    // Closing one frees its place.
    streams[0]?.close();
    await waitUntil(async () => (await events(w.token)).status === 200, {
      what: 'a place after a stream closed',
      pauseMs: 50,
    });
  });

  /** Resolves with how long the stream took to end after `since`, or rejects after `limitMs`. */
  async function endsWithin(stream: EventClient, since: number, limitMs: number): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the stream was still open after ${limitMs} ms`)), limitMs);
    });
    try {
      await Promise.race([stream.ended, late]);
    } finally {
      clearTimeout(timer);
    }
    return Date.now() - since;
  }

  const endEvent = (stream: EventClient) => stream.events.find((e) => e.event === 'end')?.data;

  test('revoking the key ends its open stream within a second, with an end event saying why; other keys stream on', async () => {
    const w = await workspace();
    const workspaceId = (await t.services.apiKeys.authenticate(w.token)).workspaceId;
    const [ws] = await t.services.apiKeys.list(wholeWorkspace(workspaceId));
    assert.ok(ws);
    const other = await t.services.apiKeys.create(workspaceId, { name: 'other' });
    const doomed = await events(w.token);
    const staying = await events(other.token);
    await waitUntil(() => doomed.comments.includes('open') && staying.comments.includes('open'), {
      what: 'both streams open',
    });
    const res = await t.request({ method: 'DELETE', url: `/v1/tokens/${ws.id}`, token: other.token });
    assert.equal(res.statusCode, 204, res.body);
    const took = await endsWithin(doomed, Date.now(), 1500);
    assert.deepEqual(
      endEvent(doomed),
      { error: 401, message: 'the API key has been revoked' },
      `after ${took} ms`,
    );
    // The same key opens no new stream; the other key's stream is untouched.
    assert.equal((await events(w.token)).status, 401);
    assert.equal(endEvent(staying), undefined);
    assert.equal((await t.request({ method: 'GET', url: '/v1/jobs', token: other.token })).statusCode, 200);
  });

  test('a key that expires while streaming ends its stream within a second of expiring', async () => {
    const w = await workspace();
    const workspaceId = (await t.services.apiKeys.authenticate(w.token)).workspaceId;
    const expiresAt = Date.now() + 1500;
    const short = await t.services.apiKeys.create(workspaceId, { name: 'short', expiresAt });
    const stream = await events(short.token);
    assert.equal(stream.status, 200);
    await endsWithin(stream, Date.now(), 4000);
    assert.ok(Date.now() >= expiresAt, 'not before the expiry');
    assert.ok(Date.now() - expiresAt < 1500, `ended ${Date.now() - expiresAt} ms after the expiry`);
    assert.deepEqual(endEvent(stream), { error: 401, message: 'the API key has expired' });
  });

  test('a key revoked through another process ends the stream open on this one', async () => {
    const second = await startTestApp(database, { shareWith: t });
    after(() => second.close());
    const w = await workspace();
    const workspaceId = (await t.services.apiKeys.authenticate(w.token)).workspaceId;
    const [key] = await t.services.apiKeys.list(wholeWorkspace(workspaceId));
    assert.ok(key);
    const stream = await events(w.token);
    await waitUntil(() => stream.comments.includes('open'), { what: 'the opening comment' });
    await second.services.apiKeys.revoke(wholeWorkspace(workspaceId), key.id);
    await endsWithin(stream, Date.now(), 1500);
    assert.deepEqual(endEvent(stream), { error: 401, message: 'the API key has been revoked' });
  });

  test('the stream ends when the server closes, and close does not wait for the client', async () => {
    const other = await startTestApp(database);
    const stream = await openEvents(await other.app.listen({ host: '127.0.0.1', port: 0 }), other.token);
    assert.equal(stream.status, 200);
    await waitUntil(() => stream.comments.includes('open'), { what: 'the opening comment' });
    await other.close();
    await stream.ended;
  });
});
