// Wake-ups instead of polls: an accepted copy and a refresh request reach an idle worker whose poll is
// an hour away, and a cancel stops a running object on a worker whose next heartbeat is twenty minutes
// away, in one process (SQLite and PostgreSQL) and from another process on PostgreSQL, also after the
// wake-up connection was cut (the database restarting looks the same to it).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import pg from 'pg';
import { FakeTokenServer } from '../fakes/token-server.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { PG_URL, testDatabases } from '../support/databases.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import {
  type Call,
  createLocation,
  newWorkspace,
  s3Client,
  seedBucket,
  waitFor,
} from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

const HOUR = 3_600_000;

let s3: S3rverHandle;
let client: S3Client;
let proxy: FaultProxy;
before(async () => {
  s3 = await startS3rver();
  client = s3Client(s3.endpoint);
  proxy = await startFaultProxy(s3.endpoint);
});
after(async () => {
  client.destroy();
  await proxy.close();
  await s3.close();
});

/**
 * A bulk copy of one object whose source read the proxy holds mid-body; canceled through `api` while
 * the object runs on `worker`'s worker. Resolves when that worker has stopped the object and parked it
 * (no owner, never claimed again), which only the cancel's wake-up can make happen this soon: the
 * worker's heartbeat, which also looks for canceled jobs, is twenty minutes away.
 */
async function cancelStopsRunningObject(api: TestApp, worker: TestApp): Promise<void> {
  const call: Call = await newWorkspace(api);
  // Two accounts (access keys), so the object streams through the worker, its read through the proxy.
  const src = await createLocation(call, {
    provider: 's3',
    secret: { access_key_id: 'READER', secret_access_key: 'secret' },
    metadata: { endpoint: proxy.url },
  });
  const dst = await createLocation(call, {
    provider: 's3',
    secret: { access_key_id: 'WRITER', secret_access_key: 'secret' },
    metadata: { endpoint: s3.endpoint },
  });
  const bucket = await seedBucket(client, { 'in/held.bin': Buffer.alloc(256 * 1024, 7) });
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  // The listing passes; the object's GET stops after its first bytes until the test ends.
  proxy.passNext(1);
  proxy.dropNext(1, held);
  try {
    const res = await call({
      method: 'POST',
      url: '/v1/copy',
      payload: { from: `${src.id}:${bucket}/in/`, to: `${dst.id}:${bucket}/out/` },
    });
    assert.equal(res.statusCode, 202, res.body);
    const jobId = res.json().job_id as string;
    const db = worker.services.db.kysely;
    const object = () =>
      db.selectFrom('job_objects').selectAll().where('job_id', '=', jobId).executeTakeFirst();
    await until(async () => (await object())?.status === 'running', 'the object to start');
    const canceled = await call({ method: 'POST', url: `/v1/jobs/${jobId}/cancel` });
    assert.equal(canceled.statusCode, 202, canceled.body);
    await until(async () => (await object())?.lease_owner === null, 'the worker to stop the object');
    const parked = await object();
    assert.equal(parked?.status, 'pending');
    assert.equal(parked?.attempts, 1);
  } finally {
    release();
    proxy.reset();
  }
}

/**
 * Waits for `condition`. Its timeout (30 s) only guards against a hang: what proves the wake-up is the
 * hour-long poll and twenty-minute heartbeat it stands in for, not how quickly it came.
 */
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  await waitUntil(condition, { what });
}

/** A single copy on s3rver accepted through `api`; resolves when `api` reads it complete. */
async function copyOne(api: TestApp): Promise<void> {
  const call: Call = await newWorkspace(api);
  const secret = { access_key_id: 'AKID', secret_access_key: 'secret' };
  const a = await createLocation(call, { provider: 's3', secret, metadata: { endpoint: s3.endpoint } });
  const src = await seedBucket(client, { 'x.txt': unique('x') });
  const res = await call({
    method: 'POST',
    url: '/v1/copy',
    payload: { from: `${a.id}:${src}/x.txt`, to: `${a.id}:${src}/y.txt` },
  });
  assert.equal(res.statusCode, 202, res.body);
  const done = await waitFor(call, `/v1/transfers/${res.json().id}`);
  assert.equal(done.status, 'complete', JSON.stringify(done));
}

await eachDatabase('wake-ups in one process', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database, {
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' },
      worker: { pollMs: HOUR, leaseMs: HOUR },
      refresher: { pollMs: HOUR },
    });
  });
  after(() => t.close());

  test('an accepted copy starts on an idle worker whose next poll is an hour away', async () => {
    await copyOne(t);
  });

  test('a cancel stops the running object at once, not at the next heartbeat', async () => {
    await cancelStopsRunningObject(t, t);
  });
});

const postgres = (await testDatabases()).find((d) => d.name === 'postgres');

describe('wake-ups across processes [postgres]', { skip: postgres?.skip ?? false }, () => {
  let api: TestApp;
  let worker: TestApp;
  let tokens: FakeTokenServer;
  before(async () => {
    tokens = await new FakeTokenServer().start();
    const env = { FERRY_EGRESS_ALLOW: '127.0.0.1/32', ...tokens.env() };
    api = await startTestApp({ name: 'postgres', skip: undefined }, { env });
    worker = await startTestApp(
      { name: 'postgres', skip: undefined },
      {
        env,
        shareWith: api,
        worker: { pollMs: HOUR, leaseMs: HOUR },
        refresher: { pollMs: HOUR, jitterMs: 0 },
      },
    );
  });
  after(async () => {
    await worker.close();
    await api.close();
    await tokens.close();
  });

  test("a copy accepted by one process starts on another's idle worker", async () => {
    await copyOne(api);
  });

  test("a cancel in one process stops the running object on another's worker at once", async () => {
    await cancelStopsRunningObject(api, worker);
  });

  test("a refresh requested in one process is run by another's idle refresher", async () => {
    const issued = tokens.oauth.box.issue(unique('owner'));
    const created = await api.request({
      method: 'POST',
      url: '/v1/locations',
      payload: {
        provider: 'box',
        label: unique('box'),
        secret: { ...issued, expiry: new Date(Date.now() + HOUR * 2).toISOString() },
      },
    });
    const id = created.json().id;
    assert.equal(
      (await api.request({ method: 'POST', url: '/v1/locations/refresh', payload: { id } })).statusCode,
      202,
    );
    let status: { refresh_requested?: boolean; consecutive_refresh_failures?: number } = {};
    await until(async () => {
      status = (await api.request({ method: 'POST', url: '/v1/locations/status', payload: { id } })).json();
      return status.refresh_requested === false;
    }, 'the refresh to be run by the other process');
    assert.equal(status.consecutive_refresh_failures, 0);
    assert.deepEqual(tokens.oauth.box.refreshRequests.slice(-1), [issued.refresh_token]);
  });

  test('after its wake-up connection is cut, a worker still hears about new copies', async () => {
    const schema = (
      await sql<{ schema: string }>`select current_schema() as schema`.execute(worker.services.db.kysely)
    ).rows[0]?.schema;
    assert.ok(schema);
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const cut = await admin.query(
        // The listening connection's last statement is the LISTEN of its last channel.
        `select pg_terminate_backend(pid) from pg_stat_activity where query like $1`,
        [`listen "ferry\\_${schema}\\_%"`],
      );
      assert.equal(cut.rowCount, 1, "the worker process's listening connection");
    } finally {
      await admin.end();
    }
    await copyOne(api);
    await copyOne(api);
  });
});
