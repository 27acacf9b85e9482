// Master-key rotation (docs/security.md, "Rotating the master key") on both databases: secrets sealed
// under key A are re-wrapped under key B by the module `ferry keys rotate-master` runs, while a process
// started with B and A keeps answering; afterwards a process with B alone opens every one of them. A
// rotation stopped after one batch continues where it stopped; a secret the service replaces between
// a batch's read and its write is kept; a record under a key the keyring lacks stops the rotation
// before it changes anything, with a message naming the key's id and never a key.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { type Keyring, masterKeyFrom } from '../../src/crypto/envelope.js';
import {
  nextBatch,
  resealBatch,
  rotateMasterKey,
  SEALED_COLUMNS,
} from '../../src/domain/master-key-rotation.js';
import { secretContext } from '../../src/domain/webhooks/webhooks.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { s3Client } from '../support/transfers.js';

const newKey = () => randomBytes(32).toString('base64');
const idOf = (key: string) => masterKeyFrom(Buffer.from(key, 'base64')).id;
const EGRESS = { FERRY_EGRESS_ALLOW: '127.0.0.1/32' };
const LOCATIONS = SEALED_COLUMNS.find((c) => c.table === 'locations') as (typeof SEALED_COLUMNS)[number];

interface Seeded {
  locations: Map<string, string>;
  webhooks: Map<string, string>;
}

await eachDatabase('master-key rotation', (database) => {
  let s3: S3rverHandle;
  let bucket: string;
  const apps: TestApp[] = [];
  before(async () => {
    s3 = await startS3rver();
    bucket = unique('rotation').toLowerCase();
    const client = s3Client(s3.endpoint);
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'kept.txt', Body: 'kept' }));
    client.destroy();
  });
  after(async () => {
    // The processes sharing a database first, its owner (which drops it) last.
    for (const app of apps.reverse()) await app.close();
    await s3.close();
  });

  /** A process; the first of a test owns the database, the others share it. */
  async function start(env: Record<string, string>, owner?: TestApp): Promise<TestApp> {
    const app = await startTestApp(database, {
      env: { ...EGRESS, ...env },
      ...(owner ? { shareWith: owner } : {}),
    });
    apps.push(app);
    return app;
  }

  /** Locations on s3rver and webhooks, created through the API of `t`; their secrets by id. */
  async function seed(t: TestApp, locations: number, webhooks: number): Promise<Seeded> {
    const seeded: Seeded = { locations: new Map(), webhooks: new Map() };
    for (let i = 0; i < locations; i++) {
      const secret = { access_key_id: unique('AKID'), secret_access_key: unique('SAK') };
      const res = await t.request({
        method: 'POST',
        url: '/v1/locations',
        payload: { provider: 's3', label: unique('s3'), secret, metadata: { endpoint: s3.endpoint } },
      });
      assert.equal(res.statusCode, 201, res.body);
      seeded.locations.set(res.json().id, JSON.stringify(secret));
    }
    for (let i = 0; i < webhooks; i++) {
      const res = await t.request({
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: `http://127.0.0.1:9/${unique('hook')}`, events: ['job.complete'] },
      });
      assert.equal(res.statusCode, 201, res.body);
      seeded.webhooks.set(res.json().id, res.json().secret);
    }
    return seeded;
  }

  /** The master key id of every sealed record, by table. */
  async function keysInUse(t: TestApp): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    for (const { table } of SEALED_COLUMNS) {
      const rows = await t.services.db.kysely.selectFrom(table).select('secret_envelope').execute();
      out[table] = [...new Set(rows.map((r) => r.secret_envelope.split('.')[1] as string))];
    }
    return out;
  }

  /** Every seeded secret opens in `keyring` to what was stored. */
  async function assertOpens(t: TestApp, keyring: Keyring, seeded: Seeded): Promise<void> {
    const db = t.services.db.kysely;
    for (const row of await db.selectFrom('locations').select(['id', 'secret_envelope']).execute()) {
      const opened = keyring.open(row.secret_envelope, row.id).reveal();
      assert.deepEqual(JSON.parse(opened), JSON.parse(seeded.locations.get(row.id) as string));
    }
    for (const row of await db.selectFrom('webhooks').select(['id', 'secret_envelope']).execute()) {
      assert.equal(
        keyring.open(row.secret_envelope, secretContext(row.id)).reveal(),
        seeded.webhooks.get(row.id),
      );
    }
  }

  const list = (t: TestApp, id: string) =>
    t.request({ method: 'POST', url: '/v1/list', payload: { id, path: bucket } });

  test('the service answers throughout a rotation; afterwards every record names B and a process with B alone opens them', async () => {
    const [a, b] = [newKey(), newKey()];
    const old = await start({ FERRY_MASTER_KEY: a });
    const seeded = await seed(old, 25, 3);
    const served = await start({ FERRY_MASTER_KEY: b, FERRY_MASTER_KEY_PREVIOUS: a }, old);
    const ids = [...seeded.locations.keys()];

    // Requests served without pause while the rotation runs; each listing uses a location not used
    // before by this process (a store once opened is cached), so its secret is opened then, under
    // whichever key holds it at that moment.
    const failures: string[] = [];
    let served200 = 0;
    let next = 0;
    const round = async () => {
      const all = await served.request({ method: 'GET', url: '/v1/locations' });
      if (all.statusCode !== 200) failures.push(`GET /v1/locations ${all.statusCode} ${all.body}`);
      const id = ids[next++ % ids.length] as string;
      const listed = await list(served, id);
      if (listed.statusCode !== 200) failures.push(`POST /v1/list ${listed.statusCode} ${listed.body}`);
      else served200++;
    };
    let rotating = true;
    const loop = (async () => {
      while (rotating) await round();
    })();
    let batches = 0;
    const result = await rotateMasterKey(served.services.db.kysely, served.services.keyring, {
      batchSize: 10,
      onProgress: async () => {
        batches++;
        // And one round between every two batches, when the tables hold records under both keys.
        await round();
      },
    }).finally(() => {
      rotating = false;
    });
    await loop;
    assert.deepEqual(failures, []);
    assert.ok(served200 >= batches, `requests were served during the rotation (${served200})`);
    assert.equal(batches, 4, 'three batches of locations and one of webhooks');
    assert.equal(result.resealed, 28);
    assert.equal(result.changed, 0);
    assert.deepEqual(result.remaining, []);
    assert.equal(result.interrupted, false);
    assert.deepEqual(await keysInUse(served), { locations: [idOf(b)], webhooks: [idOf(b)] });

    const onlyB = await start({ FERRY_MASTER_KEY: b }, old);
    await assertOpens(onlyB, onlyB.services.keyring, seeded);
    for (const id of ids.slice(0, 3)) {
      const res = await list(onlyB, id);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(
        res.json().entries.map((e: { name: string }) => e.name),
        ['kept.txt'],
      );
    }
  });

  test('a rotation stopped after one batch continues where it stopped when run again', async () => {
    const [a, b] = [newKey(), newKey()];
    const old = await start({ FERRY_MASTER_KEY: a });
    const seeded = await seed(old, 25, 3);
    const served = await start({ FERRY_MASTER_KEY: b, FERRY_MASTER_KEY_PREVIOUS: a }, old);
    const { db, keyring } = served.services;
    const stop = new AbortController();
    const first = await rotateMasterKey(db.kysely, keyring, {
      batchSize: 10,
      signal: stop.signal,
      onProgress: () => stop.abort(),
    });
    assert.equal(first.interrupted, true);
    assert.equal(first.resealed, 10);
    assert.deepEqual(
      first.remaining.map(({ table, key, records }) => ({ table, key, records })),
      [
        { table: 'locations', key: idOf(a), records: 15 },
        { table: 'webhooks', key: idOf(a), records: 3 },
      ],
    );
    // The second run re-wraps only what the first left: the records say which key sealed them.
    const second = await rotateMasterKey(db.kysely, keyring, { batchSize: 10 });
    assert.equal(second.interrupted, false);
    assert.equal(second.resealed, 18);
    assert.deepEqual(second.remaining, []);
    assert.deepEqual(await keysInUse(served), { locations: [idOf(b)], webhooks: [idOf(b)] });
    const onlyB = await start({ FERRY_MASTER_KEY: b }, old);
    await assertOpens(onlyB, onlyB.services.keyring, seeded);
  });

  test("a secret the service replaces between a batch's read and its write is kept, not overwritten", async () => {
    const [a, b] = [newKey(), newKey()];
    const old = await start({ FERRY_MASTER_KEY: a });
    const seeded = await seed(old, 3, 0);
    const served = await start({ FERRY_MASTER_KEY: b, FERRY_MASTER_KEY_PREVIOUS: a }, old);
    const { db, keyring } = served.services;
    const rows = await nextBatch(db.kysely, LOCATIONS, keyring, undefined, 100);
    assert.equal(rows.length, 3);
    const replaced = (rows[0] as { id: string }).id;
    const secret = { access_key_id: unique('AKID'), secret_access_key: unique('SAK') };
    const res = await served.request({
      method: 'PUT',
      url: '/v1/locations',
      payload: { id: replaced, secret },
    });
    assert.equal(res.statusCode, 200, res.body);
    seeded.locations.set(replaced, JSON.stringify(secret));

    assert.deepEqual(await resealBatch(db.kysely, LOCATIONS, keyring, rows), { resealed: 2, changed: 1 });
    assert.deepEqual(await keysInUse(served), { locations: [idOf(b)], webhooks: [] });
    const onlyB = await start({ FERRY_MASTER_KEY: b }, old);
    await assertOpens(onlyB, onlyB.services.keyring, seeded);
  });

  test('a record sealed under the old key during the run (a process not restarted) is reported as remaining', async () => {
    const [a, b] = [newKey(), newKey()];
    const old = await start({ FERRY_MASTER_KEY: a });
    await seed(old, 2, 1);
    const served = await start({ FERRY_MASTER_KEY: b, FERRY_MASTER_KEY_PREVIOUS: a }, old);
    const result = await rotateMasterKey(served.services.db.kysely, served.services.keyring, {
      batchSize: 10,
      onProgress: async ({ table }) => {
        // Once the run has passed the locations (it is on the webhooks), a process that still seals
        // with A stores one more.
        if (table === 'webhooks') await seed(old, 1, 0);
      },
    });
    assert.equal(result.resealed, 3);
    assert.equal(result.interrupted, false);
    assert.deepEqual(result.remaining, [{ table: 'locations', key: idOf(a), records: 1 }]);
  });

  test('a record under a key the keyring lacks stops the rotation before any change, naming the key id only', async () => {
    const [a, b] = [newKey(), newKey()];
    const old = await start({ FERRY_MASTER_KEY: a });
    await seed(old, 2, 1);
    const onlyB = await start({ FERRY_MASTER_KEY: b }, old);
    await assert.rejects(
      rotateMasterKey(onlyB.services.db.kysely, onlyB.services.keyring, { batchSize: 10 }),
      (err: Error) => {
        assert.match(err.message, new RegExp(`2 locations under master key ${idOf(a)}`));
        assert.match(err.message, new RegExp(`1 webhooks under master key ${idOf(a)}`));
        assert.match(err.message, /FERRY_MASTER_KEY_PREVIOUS/);
        for (const key of [a, b]) assert.ok(!err.message.includes(key), 'no key in the message');
        return true;
      },
    );
    assert.deepEqual(await keysInUse(onlyB), { locations: [idOf(a)], webhooks: [idOf(a)] });
    // And the service itself says which key it lacks, in its log, never the key.
    const res = await list(
      onlyB,
      (await nextBatch(onlyB.services.db.kysely, LOCATIONS, onlyB.services.keyring, undefined, 1))[0]
        ?.id as string,
    );
    assert.equal(res.statusCode, 500);
    assert.match(
      onlyB.logs.text,
      new RegExp(`sealed with master key ${idOf(a)}, which this process does not have`),
    );
    for (const key of [a, b]) assert.ok(!onlyB.logs.text.includes(key) && !res.body.includes(key));
  });
});
