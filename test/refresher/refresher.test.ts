// The refresher against fake token endpoints of the four OAuth providers (each in its provider's own
// request and answer format, test/fakes/token-formats.ts), on both databases, with an injected clock
// and the loop stepped by hand (tick). Every transition is read back through POST /v1/locations/status.
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { type RefreshDeps, refreshLocation } from '../../src/domain/refresher/refresh.js';
import { Refresher } from '../../src/domain/refresher/refresher.js';
import { fixture } from '../fakes/fixtures.js';
import type { FakeOAuth } from '../fakes/oauth.js';
import type { TokenErrorKind, TokenProvider } from '../fakes/token-formats.js';
import { FakeTokenServer, TOKEN_PROVIDERS } from '../fakes/token-server.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { deferred } from '../support/deferred.js';
import { eachDatabase, secretFor, unique } from '../support/fixtures.js';
import { waitUntil } from '../support/wait.js';
import { storedSecret } from './stored.js';

const MIN = 60_000;

await eachDatabase('refresher', (database) => {
  const clock = new ManualClock(Date.parse('2026-11-24T12:00:00Z'));
  let t: TestApp;
  let tokens: FakeTokenServer;
  let refresher: Refresher;

  before(async () => {
    tokens = await new FakeTokenServer({ now: () => clock.now() }).start();
    t = await startTestApp(database, { clock, env: tokens.env() });
    t.services.refresh.random = () => 0;
    refresher = new Refresher(t.services.refresh, { pollMs: 3_600_000, jitterMs: 0 });
  });
  after(async () => {
    await t.close();
    await tokens.close();
  });
  afterEach(async () => {
    await t.services.db.kysely.deleteFrom('locations').execute();
  });

  const fake = (provider: TokenProvider): FakeOAuth => tokens.oauth[provider];

  async function create(
    provider: TokenProvider,
    options: { expiresInMs?: number; metadata?: Record<string, unknown> } = {},
  ): Promise<{ id: string; refreshToken: string }> {
    const issued = fake(provider).issue(unique('owner'));
    const secret = {
      ...issued,
      expiry: new Date(clock.now() + (options.expiresInMs ?? 5 * MIN)).toISOString(),
    };
    const res = await t.request({
      method: 'POST',
      url: '/v1/locations',
      payload: {
        provider,
        label: unique(provider),
        secret,
        ...(options.metadata ? { metadata: options.metadata } : {}),
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return { id: res.json().id, refreshToken: issued.refresh_token };
  }

  async function status(id: string) {
    const res = await t.request({ method: 'POST', url: '/v1/locations/status', payload: { id } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  }

  async function requestRefresh(id: string) {
    const res = await t.request({ method: 'POST', url: '/v1/locations/refresh', payload: { id } });
    assert.equal(res.statusCode, 202, res.body);
  }

  const stored = (id: string) => storedSecret(t, id);

  for (const provider of TOKEN_PROVIDERS) {
    test(`${provider}: a token expiring within the ahead window is refreshed in ${provider}'s request format; expiry moves, counter and flag clear`, async () => {
      const { id, refreshToken } = await create(provider);
      const before = fake(provider).refreshRecords.length;
      await refresher.tick();
      const records = fake(provider).refreshRecords.slice(before);
      assert.equal(records.length, 1, 'one refresh');
      const record = records[0];
      assert.ok(record);
      assert.equal(record.refreshToken, refreshToken);
      assert.equal(record.clientId, `${provider}-client`);
      if (provider === 'dropbox') {
        assert.equal(record.clientVia, 'basic', 'Dropbox: the app key and secret as HTTP Basic');
        assert.deepEqual(record.fields, ['grant_type', 'refresh_token']);
      } else {
        assert.equal(record.clientVia, 'form');
        assert.ok(record.fields.includes('client_secret'));
      }
      assert.equal(record.scope, provider === 'onedrive' ? 'offline_access Files.ReadWrite.All' : null);

      const s = await status(id);
      assert.equal(s.status, 'active');
      assert.equal(s.access_token_expires_at, new Date(clock.now() + 3600_000).toISOString());
      assert.equal(s.consecutive_refresh_failures, 0);
      assert.equal(s.refresh_requested, false);
      assert.equal(s.last_refresh_attempt_at, new Date(clock.now()).toISOString());
      assert.equal(s.last_refresh_error, undefined);

      const secret = await stored(id);
      assert.equal(
        fake(provider).checkBearer(`Bearer ${secret.access_token}`).ok,
        true,
        'the new access token is stored',
      );
      if (provider === 'onedrive' || provider === 'box') {
        assert.notEqual(secret.refresh_token, refreshToken, 'the rotated refresh token is stored');
      } else {
        assert.equal(secret.refresh_token, refreshToken, 'a stable refresh token is kept');
      }
      // A second refresh uses what was stored; for box the first refresh token is dead by now.
      await requestRefresh(id);
      await refresher.tick();
      assert.equal((await status(id)).status, 'active');
      const used = fake(provider).refreshRequests.slice(before);
      assert.equal(used.length, 2);
      if (provider === 'box' || provider === 'onedrive')
        assert.notEqual(used[0], used[1], 'never the same refresh token twice');
    });
  }

  test('onedrive: the scopes in metadata are sent space-separated', async () => {
    await create('onedrive', { metadata: { scopes: ['offline_access', 'Files.Read.All', 'User.Read'] } });
    await refresher.tick();
    assert.equal(fake('onedrive').refreshRecords.at(-1)?.scope, 'offline_access Files.Read.All User.Read');
  });

  test('a token far from expiry is left alone until a refresh is requested; the request sets the flag, the refresh clears it', async () => {
    const { id } = await create('dropbox', { expiresInMs: 2 * 60 * MIN });
    const before = fake('dropbox').refreshRequests.length;
    await refresher.tick();
    assert.equal(fake('dropbox').refreshRequests.length, before, 'not due');
    await requestRefresh(id);
    assert.equal((await status(id)).refresh_requested, true);
    await refresher.tick();
    assert.equal(fake('dropbox').refreshRequests.length, before + 1);
    const s = await status(id);
    assert.equal(s.refresh_requested, false);
    assert.equal(s.access_token_expires_at, new Date(clock.now() + 3600_000).toISOString());
  });

  for (const provider of TOKEN_PROVIDERS) {
    test(`${provider}: the recorded invalid_grant answer (test/fakes/${provider}/fixtures) fails the location, saying to store a new secret`, async () => {
      const { id } = await create(provider);
      const recorded = fixture(provider, 'token_invalid_grant');
      fake(provider).failNext({ status: recorded.status, body: recorded.body });
      await refresher.tick();
      const s = await status(id);
      assert.equal(s.status, 'failed');
      assert.match(s.failure_reason, /invalid_grant/);
      assert.match(s.failure_reason, /store a new secret/);
    });

    test(`${provider}: invalid_grant is terminal: failed, a reason that says to store a new secret, no more attempts; a new secret makes it active`, async () => {
      const { id } = await create(provider);
      fake(provider).failNext('invalid_grant');
      await refresher.tick();
      const s = await status(id);
      assert.equal(s.status, 'failed');
      assert.match(s.failure_reason, /invalid_grant/);
      assert.match(s.failure_reason, /store a new secret/);
      assert.equal(s.consecutive_refresh_failures, 1);
      const why = t.logs.lines.map((l) => JSON.parse(l)).find((l) => l.location === id && l.to === 'failed');
      assert.ok(why, 'the log says why the location left active');
      assert.equal(why.from, 'active');
      assert.match(why.reason, /invalid_grant/);
      const list = (await t.request({ method: 'GET', url: '/v1/locations' })).json();
      assert.match(list.find((l: { id: string }) => l.id === id).validation_error, /store a new secret/);

      const count = fake(provider).refreshRequests.length;
      clock.advance(60 * MIN);
      await refresher.tick();
      await requestRefresh(id);
      await refresher.tick();
      assert.equal(fake(provider).refreshRequests.length, count, 'a failed location is not refreshed');
      const after = await status(id);
      assert.equal(after.refresh_requested, false, 'the request is answered');
      assert.match(after.last_refresh_error, /not refreshed: the location is failed/);

      const replaced = await t.request({
        method: 'PUT',
        url: '/v1/locations',
        payload: {
          id,
          secret: {
            ...fake(provider).issue(unique('owner')),
            expiry: new Date(clock.now() + 60 * MIN).toISOString(),
          },
        },
      });
      assert.equal(replaced.statusCode, 200, replaced.body);
      const active = await status(id);
      assert.equal(active.status, 'active');
      assert.equal(active.consecutive_refresh_failures, 0);
      assert.equal(active.failure_reason, undefined);
    });
  }

  for (const [provider, words] of [
    ['drive', /invalid_rapt/],
    ['onedrive', /AADSTS50076/],
  ] as const) {
    test(`${provider}: a grant that waits on its owner (${words.source}) is needs_attention at once with the provider's words; a requested refresh that succeeds makes it active`, async () => {
      const { id } = await create(provider);
      fake(provider).failNext('interaction');
      await refresher.tick();
      const s = await status(id);
      assert.equal(s.status, 'needs_attention');
      assert.match(s.last_refresh_error, words);
      assert.equal(s.consecutive_refresh_failures, 1);
      const count = fake(provider).refreshRequests.length;
      clock.advance(60 * MIN);
      await refresher.tick();
      assert.equal(fake(provider).refreshRequests.length, count, 'not retried on its own');
      await requestRefresh(id);
      await refresher.tick();
      const after = await status(id);
      assert.equal(after.status, 'active');
      assert.equal(after.consecutive_refresh_failures, 0);
      assert.equal(after.last_refresh_error, undefined);
      assert.equal(after.failure_reason, undefined);
    });
  }

  for (const kind of [
    'invalid_client',
    'unauthorized_client',
    'invalid_scope',
  ] as const satisfies TokenErrorKind[]) {
    test(`${kind} is ferry's own settings: needs_attention naming FERRY_BOX_CLIENT_*, never failed, logged at error level once per provider`, async () => {
      t.services.refresh.clientErrorsLogged?.clear();
      const first = await create('box');
      const second = await create('box');
      fake('box').failNext(kind);
      fake('box').failNext(kind);
      const logged = t.logs.lines.length;
      await refresher.tick();
      for (const { id } of [first, second]) {
        const s = await status(id);
        assert.equal(s.status, 'needs_attention');
        assert.match(s.last_refresh_error, /FERRY_BOX_CLIENT_ID and FERRY_BOX_CLIENT_SECRET/);
      }
      const errors = t.logs.lines
        .slice(logged)
        .map((l) => JSON.parse(l))
        .filter((l) => l.level === 50 && /FERRY_BOX_CLIENT_ID/.test(l.msg));
      assert.equal(errors.length, 1, 'one error line for the provider');
    });
  }

  test('passing failures are retried with backoff (Retry-After honoured) and counted; the maximum in a row is needs_attention', async () => {
    const { id } = await create('dropbox');
    const max = t.config.refresh.maxFailures;
    fake('dropbox').failNext('throttled');
    await refresher.tick();
    let s = await status(id);
    assert.equal(s.status, 'active');
    assert.equal(s.consecutive_refresh_failures, 1);
    assert.match(s.last_refresh_error, /429/);
    const row = await t.services.db.kysely
      .selectFrom('locations')
      .select('refresh_after')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.ok(row.refresh_after >= clock.now() + 7000, 'Retry-After: 7 is honoured');
    const count = fake('dropbox').refreshRequests.length;
    await refresher.tick();
    assert.equal(fake('dropbox').refreshRequests.length, count, 'not before its backoff');
    const fromStore = await refreshLocation(t.services.refresh, id, { kind: 'expiring', marginMs: 10 * MIN });
    assert.equal(fromStore.kind, 'failed', 'a store waits out the backoff too');
    assert.ok(
      fromStore.kind === 'failed' &&
        fromStore.failureClass === 'passing' &&
        (fromStore.retryAfterSeconds ?? 0) >= 7,
    );
    assert.equal(fake('dropbox').refreshRequests.length, count);
    for (let failures = 2; failures <= max; failures++) {
      fake('dropbox').failNext(failures % 2 === 0 ? 'server_error' : 'unavailable');
      clock.advance(11 * MIN);
      await refresher.tick();
      s = await status(id);
      assert.equal(s.consecutive_refresh_failures, failures);
      assert.equal(s.status, failures < max ? 'active' : 'needs_attention');
    }
    assert.match(s.failure_reason, new RegExp(`${max} refresh attempts in a row failed`));
    await requestRefresh(id);
    await refresher.tick();
    s = await status(id);
    assert.equal(s.status, 'active');
    assert.equal(s.consecutive_refresh_failures, 0);
  });

  test('a network failure is passing: counted, the location stays active', async () => {
    const { id } = await create('drive');
    const apps = t.services.refresh.apps;
    const saved = apps.drive.tokenUrl;
    apps.drive.tokenUrl = 'http://127.0.0.1:1/token';
    try {
      await refresher.tick();
    } finally {
      apps.drive.tokenUrl = saved;
    }
    const s = await status(id);
    assert.equal(s.status, 'active');
    assert.equal(s.consecutive_refresh_failures, 1);
    assert.match(s.last_refresh_error, /token endpoint not reached/);
  });

  test('a static location accepts a refresh request and nothing changes', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/v1/locations',
      payload: { provider: 's3', label: unique('s3'), secret: secretFor('s3') },
    });
    const id = res.json().id;
    await requestRefresh(id);
    const s = await status(id);
    assert.equal(s.refresh_requested, false);
    assert.equal(s.rotation_class, undefined);
  });

  test('one refresh per location across processes: a second owner finds the lease held and refreshes nothing; after the first, the token is fresh', async () => {
    const { id } = await create('box');
    const other: RefreshDeps = { ...t.services.refresh, owner: 'another-process' };
    const before = fake('box').refreshRequests.length;
    // The first refresh is held at the endpoint, its lease taken, until the second owner has answered.
    const inside = deferred();
    const letGo = deferred();
    fake('box').onRefresh = async () => {
      inside.resolve();
      await letGo.promise;
    };
    let first: ReturnType<typeof refreshLocation> | undefined;
    try {
      first = refreshLocation(t.services.refresh, id, { kind: 'due' });
      await inside.promise;
      assert.deepEqual(await refreshLocation(other, id, { kind: 'due' }), { kind: 'busy' });
    } finally {
      letGo.resolve();
      fake('box').onRefresh = undefined;
    }
    assert.equal((await first).kind, 'refreshed');
    const again = await refreshLocation(other, id, { kind: 'due' });
    assert.equal(again.kind, 'fresh', 'another process refreshed a moment ago');
    assert.equal(fake('box').refreshRequests.length, before + 1);
  });

  test('a secret replaced while a refresh is under way wins: the refreshed token is discarded', async () => {
    const { id } = await create('box');
    const replacement = {
      ...fake('box').issue(unique('owner')),
      expiry: new Date(clock.now() + 60 * MIN).toISOString(),
    };
    fake('box').onRefresh = async () => {
      const res = await t.request({
        method: 'PUT',
        url: '/v1/locations',
        payload: { id, secret: replacement },
      });
      assert.equal(res.statusCode, 200, res.body);
    };
    try {
      assert.equal((await refreshLocation(t.services.refresh, id, { kind: 'due' })).kind, 'lost');
    } finally {
      fake('box').onRefresh = undefined;
    }
    const secret = await stored(id);
    assert.equal(secret.refresh_token, replacement.refresh_token);
    assert.equal(secret.access_token, replacement.access_token);
  });

  test('many locations due at once are refreshed at most `concurrency` at a time in a process', async () => {
    for (let i = 0; i < 6; i++) await create('drive');
    const bounded = new Refresher(t.services.refresh, { pollMs: 3_600_000, jitterMs: 0, concurrency: 2 });
    // Every refresh is held at the endpoint until the test lets go. Within the bound exactly two
    // arrive and the other four wait for a slot, where nothing but a slot let go moves them on: a bound
    // that let more through would never show four waiting.
    let arrived = 0;
    const two = deferred();
    const gate = deferred();
    fake('drive').onRefresh = async () => {
      arrived++;
      if (arrived === 2) two.resolve();
      await gate.promise;
    };
    const before = fake('drive').refreshRequests.length;
    let ticking: Promise<void> | undefined;
    try {
      ticking = bounded.tick();
      await two.promise;
      await waitUntil(() => bounded.waitingForSlot === 4, {
        what: 'the other four to wait for a slot',
        detail: () => `${arrived} at the endpoint, ${bounded.waitingForSlot} waiting for a slot`,
      });
      assert.equal(arrived, 2, 'two at the endpoint, the rest waiting for a slot');
    } finally {
      gate.resolve();
      fake('drive').onRefresh = undefined;
      await ticking;
    }
    assert.equal(fake('drive').refreshRequests.length, before + 6);
  });

  test('/metrics counts refreshes by provider and outcome, and locations by provider and status', async () => {
    await create('onedrive');
    const failing = await create('onedrive');
    await refresher.tick();
    fake('onedrive').failNext('invalid_grant');
    await requestRefresh(failing.id);
    await refresher.tick();
    const text = (await t.request({ method: 'GET', url: '/metrics' })).body;
    assert.match(text, /ferry_oauth_refreshes_total\{provider="onedrive",outcome="success"\} [1-9]/);
    assert.match(text, /ferry_oauth_refreshes_total\{provider="onedrive",outcome="terminal"\} [1-9]/);
    assert.match(text, /ferry_locations\{provider="onedrive",status="active"\} 1\n/);
    assert.match(text, /ferry_locations\{provider="onedrive",status="failed"\} 1\n/);
  });

  test('no token, refresh token or client secret reaches a log line', async () => {
    const { id } = await create('box');
    fake('box').failNext('invalid_client');
    await refresher.tick();
    await requestRefresh(id);
    await refresher.tick();
    const secret = await stored(id);
    for (const value of [secret.access_token, secret.refresh_token, 'box-client-secret']) {
      assert.equal(t.logs.text.includes(value), false);
    }
  });
});
