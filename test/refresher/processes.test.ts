// One refresh per location across processes: two real `ferry serve` workers on one PostgreSQL schema
// refresh one box location against a box-like token endpoint that accepts each refresh token exactly
// once and answers slowly. Access tokens live a minute and the refresher looks ten minutes ahead, so
// the location is due again at every scan of either worker: refresh cycles follow each other as fast
// as the two processes compete for the lease.
//
// Each worker reaches the endpoint at its own URL (/box/<tag>/token), so the endpoint knows which
// process asked. Three runs: no kills; one worker killed (SIGKILL) at a random moment of each cycle
// and started again; and one killed after the endpoint spent its token and before it could store
// the answer, which must end in the documented failed state, not a loop.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { Keyring, masterKeyFrom } from '../../src/crypto/envelope.js';
import type { OAuthSecret } from '../../src/providers.js';
import { FakeTokenServer } from '../fakes/token-server.js';
import { createSchema, testDatabases } from '../support/databases.js';
import { unique } from '../support/fixtures.js';
import { apiCall, type FerryProcess, killAll, startServe } from '../support/processes.js';
import { HANG_MS, waitUntil } from '../support/wait.js';

const postgres = (await testDatabases()).find((d) => d.name === 'postgres');
const CYCLES = 50;
const KILLS = 6;

describe('refresher across processes [sqlite]', {
  skip: 'several processes on one database need PostgreSQL; SQLite is for one process (README)',
}, () => {});

describe('refresher across processes [postgres]', { skip: postgres?.skip ?? false }, () => {
  let tokens: FakeTokenServer;
  let schema: Awaited<ReturnType<typeof createSchema>>;
  let db: pg.Client;
  let keyring: Keyring;
  let env: Record<string, string>;
  let origin: string;
  let apiKey: string;
  const dirs: string[] = [];
  const workers = new Map<string, FerryProcess>();

  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-refresh-'));
    dirs.push(dir);
    return dir;
  };
  const box = () => tokens.oauth.box;

  before(async () => {
    [tokens, schema] = await Promise.all([
      new FakeTokenServer({ accessTokenTtlSeconds: 60 }).start(),
      createSchema(),
    ]);
    box().answerDelayMs = 50;
    db = new pg.Client({ connectionString: schema.url });
    await db.connect();
    const masterKey = randomBytes(32);
    keyring = new Keyring([masterKeyFrom(masterKey)]);
    env = {
      FERRY_DATABASE_URL: schema.url,
      FERRY_MASTER_KEY: masterKey.toString('base64'),
      FERRY_BOX_CLIENT_ID: 'box-client',
      FERRY_BOX_CLIENT_SECRET: 'box-client-secret',
      FERRY_REFRESH_POLL_SECONDS: '1',
      FERRY_REFRESH_AHEAD_SECONDS: '600',
      FERRY_WORKER_LEASE_SECONDS: '3',
      FERRY_SHUTDOWN_SECONDS: '1',
    };
    const apiDir = dataDir();
    ({ origin } = await startServe('api', { ...env, FERRY_ROLE: 'api', FERRY_DATA_DIR: apiDir }));
    apiKey = readFileSync(join(apiDir, 'bootstrap-key'), 'utf8').trim();
  });

  after(async () => {
    await killAll();
    await db?.end();
    await schema?.drop();
    await tokens?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    apiCall<T>(origin, apiKey, method, path, body);

  async function startWorker(tag: string): Promise<FerryProcess> {
    const worker = await startServe(`worker-${tag}`, {
      ...env,
      FERRY_ROLE: 'worker',
      FERRY_DATA_DIR: dataDir(),
      FERRY_BOX_TOKEN_URL: tokens.tokenUrl('box', tag),
    });
    workers.set(tag, worker);
    return worker;
  }

  async function newLocation(): Promise<string> {
    const issued = box().issue(unique('owner'));
    const res = await call('POST', '/v1/locations', {
      provider: 'box',
      label: unique('box'),
      secret: issued,
    });
    assert.equal(res.status, 201, JSON.stringify(res.json));
    return String(res.json.id);
  }

  const status = async (id: string) =>
    (await call<Record<string, unknown>>('POST', '/v1/locations/status', { id })).json;

  async function storedRefreshToken(id: string): Promise<string> {
    const row = await db.query<{ secret_envelope: string }>(
      'select secret_envelope from locations where id = $1',
      [id],
    );
    const envelope = row.rows[0]?.secret_envelope;
    assert.ok(envelope);
    return (JSON.parse(keyring.open(envelope, id).reveal()) as OAuthSecret).refresh_token;
  }

  /** Resolves once `condition` holds, checked every 20 ms; fails with the workers' logs after `ms`. */
  async function until(
    what: string,
    condition: () => boolean | Promise<boolean>,
    ms = HANG_MS,
  ): Promise<void> {
    await waitUntil(condition, {
      what,
      timeoutMs: ms,
      pauseMs: 20,
      detail: () => [...workers.values()].map((w) => w.log()).join('\n'),
    });
  }

  function assertNoTokenTwice(): void {
    const seen = box().refreshRequests;
    assert.equal(new Set(seen).size, seen.length, 'the endpoint never saw the same refresh token twice');
    assert.deepEqual(box().refused, []);
  }

  let id: string;

  test(`two workers, ${CYCLES} refresh cycles: the location never fails and no refresh token is sent twice`, async () => {
    id = await newLocation();
    await Promise.all([startWorker('a'), startWorker('b')]);
    await until(
      `${CYCLES} refreshes`,
      () => {
        assertNoTokenTwice();
        return box().refreshRequests.length >= CYCLES;
      },
      2 * HANG_MS,
    );
    assertNoTokenTwice();
    const s = await status(id);
    assert.equal(s.status, 'active', JSON.stringify(s));
    assert.equal(s.consecutive_refresh_failures, 0);
  });

  test(`one of the two killed (SIGKILL) at a random moment of each of ${KILLS} cycles: the survivor carries on`, async () => {
    for (let cycle = 0; cycle < KILLS; cycle++) {
      const tag = cycle % 2 === 0 ? 'a' : 'b';
      const victim = workers.get(tag);
      assert.ok(victim);
      // A random moment of the cycle, only to vary where in it the kill falls (its length changes
      // nothing else): whatever the moment, the loop below kills the victim only where its death
      // spends no token, and every assertion holds for each such moment.
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 1000)));
      // Freeze the victim, then kill it only where its death spends no token: when no answer of the
      // endpoint is on its way and the stored refresh token is the live one. (Dying after the endpoint
      // spent a token and before storing it is the next test.)
      while (true) {
        victim.child.kill('SIGSTOP');
        await until('the endpoint idle', () => tokens.busy() === 0);
        if (box().isLive(await storedRefreshToken(id))) break;
        // A process holds an answer it has not stored yet (the victim, frozen, or the survivor): the
        // victim runs again until the live token is the stored one, then is frozen again.
        victim.child.kill('SIGCONT');
        await until('the live refresh token stored', async () => box().isLive(await storedRefreshToken(id)));
      }
      await victim.kill();
      const before = box().refreshRequests.length;
      await until('the survivor refreshing', () => box().refreshRequests.length >= before + 2);
      await startWorker(tag);
      assertNoTokenTwice();
      assert.equal((await status(id)).status, 'active');
    }
  });

  test('a worker killed after the endpoint spent its token and before it stored the answer: failed, saying to store a new secret, once', async () => {
    const tag = 'b';
    const victim = workers.get(tag);
    assert.ok(victim);
    let killed: Promise<unknown> | undefined;
    box().onRefresh = async (_token, req) => {
      if (FakeTokenServer.tagOf(req) !== tag || killed) return;
      killed = victim.kill();
      await killed;
    };
    try {
      await until('the victim asking', () => killed !== undefined);
      await killed;
      await until('the location failing', async () => (await status(id)).status === 'failed');
    } finally {
      box().onRefresh = undefined;
    }
    const s = await status(id);
    assert.match(String(s.failure_reason), /invalid_grant/);
    assert.match(String(s.failure_reason), /store a new secret/);
    assert.match(String(s.failure_reason), /replaced at every refresh/);
    assert.equal(box().refused.length, 1, 'the spent token was tried once');

    // Not a loop: a requested refresh is answered without asking the endpoint again.
    const requests = box().refreshRequests.length;
    assert.equal((await call('POST', '/v1/locations/refresh', { id })).status, 202);
    await until('the request answered', async () => (await status(id)).refresh_requested === false);
    assert.equal(box().refreshRequests.length, requests);
    assert.equal(box().refused.length, 1);
  });
});
