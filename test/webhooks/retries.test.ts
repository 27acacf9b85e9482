// Webhook retries, timeouts, disabling and the egress guard at delivery, on both databases, with the
// deliverer stepped by hand on an injected clock (and jitter fixed at its middle), so a day of backoff
// takes no time: a 500 is tried again after 5 s, then 5 min; an endpoint that does not answer within
// the timeout is tried again; one that fails for a day is disabled, says why, gets no new events, and
// takes them again once re-enabled; an address the allow list no longer admits gets no connection; and
// two deliverers on two connections to one database deliver each message once. Attempts are
// independent: an endpoint that answers 200 and trickles its body is cut off at the attempt's bound
// (a timeout) while another workspace's endpoint gets its event meanwhile, and a slow endpoint holds only
// its own slots; an event whose attempts crash is failed after three. Events are queued through the
// outbox (src/queue/outbox.ts) as the lifecycles queue them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Registry } from 'prom-client';
import { type Db, openDatabase } from '../../src/db/database.js';
import { WebhookDeliverer } from '../../src/domain/webhooks/deliverer.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { createEgress, type Egress } from '../../src/net/egress.js';
import { emit } from '../../src/queue/outbox.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import type { Call } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';
import { Receiver } from './receiver.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

await eachDatabase('webhook retries', (database) => {
  // Now, so that the first attempt's timestamp passes standardwebhooks' five-minute tolerance.
  const clock = new ManualClock(Date.now());
  let t: TestApp;
  const receivers: Receiver[] = [];
  const extraDbs: Db[] = [];

  before(async () => {
    t = await startTestApp(database, { clock, env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' } });
  });
  after(async () => {
    await t?.close();
    await Promise.all([...receivers.map((r) => r.close()), ...extraDbs.map((d) => d.close())]);
  });

  function deliverer(
    options: {
      timeoutMs?: number;
      egress?: Egress;
      db?: Db;
      registry?: Registry;
      concurrency?: number;
      perEndpoint?: number;
    } = {},
  ): WebhookDeliverer {
    return new WebhookDeliverer(
      {
        db: options.db ?? t.services.db,
        clock,
        logger: t.services.logger,
        keyring: t.services.keyring,
        egress: options.egress ?? t.services.stores.egress,
        owner: unique('test-deliverer'),
        registry: options.registry ?? new Registry(),
        random: () => 0.5,
      },
      {
        pollMs: HOUR,
        timeoutMs: options.timeoutMs ?? 5000,
        ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
        ...(options.perEndpoint === undefined ? {} : { perEndpoint: options.perEndpoint }),
      },
    );
  }
  const running: WebhookDeliverer[] = [];
  after(() => Promise.all(running.map((d) => d.stop())));

  /** The message of `hook` (one per test). */
  const messageOf = (hookId: string) =>
    t.services.db.kysely
      .selectFrom('webhook_messages')
      .select(['status', 'attempts', 'crashes', 'run_after', 'lease_owner'])
      .where('webhook_id', '=', hookId)
      .executeTakeFirstOrThrow();

  /** A workspace with a webhook on a new receiver for job.complete. */
  async function setup() {
    const receiver = await new Receiver().start();
    receivers.push(receiver);
    const workspace = await ensureWorkspace(t.services.db.kysely, unique('ws'), clock);
    const key = await t.services.apiKeys.create(workspace.id, { name: 'test' });
    const call: Call = (options) => t.request({ ...options, token: key.token });
    const res = await call({
      method: 'POST',
      url: '/v1/webhooks',
      payload: { url: receiver.url, events: ['job.complete'] },
    });
    assert.equal(res.statusCode, 201, res.body);
    const hook = res.json() as { id: string; secret: string };
    const event = (n = 1) =>
      emit(t.services.db.kysely, {
        workspaceId: workspace.id,
        type: 'job.complete',
        data: { job_id: unique('job'), n },
        at: clock.now(),
      });
    const get = async () => (await call({ method: 'GET', url: `/v1/webhooks/${hook.id}` })).json();
    const log = async () =>
      (await call({ method: 'GET', url: `/v1/webhooks/${hook.id}/deliveries` })).json().deliveries as Array<
        Record<string, unknown>
      >;
    /** Deletes the endpoint with its queue, so that no later test's tick makes its attempts. */
    const remove = async () =>
      assert.equal((await call({ method: 'DELETE', url: `/v1/webhooks/${hook.id}` })).statusCode, 204);
    return { receiver, call, hook, event, get, log, workspace, remove };
  }

  test('a 500 is tried again after 5 s, then after 5 min; the log lists each attempt, newest first', async () => {
    const { receiver, hook, event, get, log } = await setup();
    const registry = new Registry();
    const d = deliverer({ registry });
    receiver.answer(500, 500, 204);
    assert.equal(await event(), 1);
    await d.tick();
    assert.equal(receiver.received.length, 1);
    const first = receiver.received[0];
    assert.ok(first);
    const verified = receiver.verify(first, hook.secret);
    assert.equal(verified.type, 'job.complete');
    assert.ok((await get()).failing_since, 'a failing endpoint says since when');

    clock.advance(4_999);
    await d.tick();
    assert.equal(receiver.received.length, 1, 'not before 5 s');
    clock.advance(1);
    await d.tick();
    assert.equal(receiver.received.length, 2, 'at 5 s');
    clock.advance(299_999);
    await d.tick();
    assert.equal(receiver.received.length, 2, 'not before 5 min more');
    clock.advance(1);
    await d.tick();
    assert.equal(receiver.received.length, 3, 'at 5 min more');
    clock.advance(DAY);
    await d.tick();
    assert.equal(receiver.received.length, 3, 'a delivered message is not sent again');

    const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
    assert.deepEqual([...ids], [verified.id], 'every attempt carries the same webhook-id');
    const entries = await log();
    assert.deepEqual(
      entries.map((e) => [e.attempt, e.status_code, e.event_id, e.type]),
      [
        [3, 204, verified.id, 'job.complete'],
        [2, 500, verified.id, 'job.complete'],
        [1, 500, verified.id, 'job.complete'],
      ],
    );
    assert.equal((await get()).failing_since, undefined, 'a delivery ends the failure streak');
    const counted = await registry.getSingleMetric('ferry_webhook_deliveries_total')?.get();
    assert.deepEqual(Object.fromEntries((counted?.values ?? []).map((v) => [v.labels.outcome, v.value])), {
      retried: 2,
      delivered: 1,
    });
    assert.ok(!t.logs.text.includes(hook.secret.slice(6)), 'the secret is in no log line');
  });

  test('an endpoint that does not answer within the timeout is recorded as a timeout and tried again', async () => {
    const { receiver, event, log } = await setup();
    // The bound is a real timer: 2 s, so that the request reaches the receiver before it whatever the
    // machine's pace (at 0.3 s, a stalled process could meet the bound first), and the attempt that is
    // answered at once is made under the usual 5 s.
    const timeoutMs = 2000;
    receiver.answer('hang', 204);
    await event();
    await deliverer({ timeoutMs }).tick();
    assert.equal(receiver.received.length, 1);
    const [timedOut] = await log();
    assert.equal(timedOut?.error, 'timeout');
    assert.equal(timedOut?.status_code, undefined);
    assert.ok(Number(timedOut?.duration_ms) >= timeoutMs - 10, `took ${timedOut?.duration_ms} ms`);
    clock.advance(5_000);
    await deliverer().tick();
    assert.deepEqual(
      (await log()).map((e) => [e.attempt, e.status_code ?? e.error]),
      [
        [2, 204],
        [1, 'timeout'],
      ],
    );
  });

  test('an endpoint that fails for a day is disabled, says why, gets no new events until re-enabled', async () => {
    const { receiver, hook, event, get, log, call } = await setup();
    const d = deliverer();
    receiver.answer(500);
    const created = clock.now();
    await event();
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      await d.tick();
      times.push(clock.now() - created);
      const message = await t.services.db.kysely
        .selectFrom('webhook_messages')
        .select(['status', 'run_after'])
        .where('webhook_id', '=', hook.id)
        .executeTakeFirstOrThrow();
      if (message.status !== 'pending') {
        assert.equal(message.status, 'failed');
        break;
      }
      clock.set(message.run_after);
    }
    const s = 1000;
    const m = 60 * s;
    const h = 60 * m;
    assert.deepEqual(times, [
      0,
      5 * s,
      5 * m + 5 * s,
      35 * m + 5 * s,
      2 * h + 35 * m + 5 * s,
      7 * h + 35 * m + 5 * s,
      17 * h + 35 * m + 5 * s,
      DAY,
    ]);
    assert.equal(receiver.received.length, 8);
    assert.equal((await log()).length, 8);
    const view = await get();
    assert.equal(view.status, 'disabled');
    assert.equal(view.disabled_reason, 'every delivery attempt failed for 24 hours; the last: HTTP 500');
    assert.equal(view.disabled_at, new Date(created + DAY).toISOString());

    assert.equal(await event(), 0, 'a disabled endpoint is sent no new events');
    const on = await call({
      method: 'PATCH',
      url: `/v1/webhooks/${hook.id}`,
      payload: { status: 'enabled' },
    });
    assert.equal(on.json().status, 'enabled');
    assert.equal(on.json().disabled_reason, undefined);
    receiver.answer(204);
    clock.advance(1000);
    assert.equal(await event(), 1);
    await d.tick();
    assert.equal(receiver.received.length, 9);
    assert.equal((await log())[0]?.status_code, 204);
  });

  test('a deliverer that stops mid-attempt hands the message back uncounted; the next one delivers it', async () => {
    const { receiver, hook, event, log } = await setup();
    receiver.answer('hang', 204);
    const stopping = deliverer({ timeoutMs: 600_000 });
    await event();
    stopping.start();
    stopping.nudge();
    await waitUntil(() => receiver.received.length === 1, { what: 'the attempt to reach the receiver' });
    await stopping.stop();
    const row = await t.services.db.kysely
      .selectFrom('webhook_messages')
      .select(['status', 'attempts', 'lease_owner'])
      .where('webhook_id', '=', hook.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { status: 'pending', attempts: 0, lease_owner: null });
    assert.deepEqual(await log(), [], 'an interrupted attempt is not logged');
    await deliverer().tick();
    assert.equal(receiver.received.length, 2);
    assert.deepEqual(
      (await log()).map((e) => [e.attempt, e.status_code]),
      [[1, 204]],
    );
  });

  test('an address the allow list no longer admits gets no connection: the attempt is recorded as blocked', async () => {
    const { receiver, event, log } = await setup();
    // The endpoint was admitted at creation; the deliverer's guard now allows no loopback address.
    const d = deliverer({ egress: createEgress([]) });
    await event();
    await d.tick();
    assert.equal(receiver.connections, 0);
    const [blocked] = await log();
    assert.equal(blocked?.error, 'blocked');
    assert.equal(blocked?.attempt, 1);
  });

  test('two deliverers on two connections to one database deliver each message once', async () => {
    const { receiver, event, log } = await setup();
    receiver.answer(204);
    const other = openDatabase({ dataDir: t.config.dataDir, databaseUrl: t.config.databaseUrl });
    extraDbs.push(other);
    const a = deliverer();
    const b = deliverer({ db: other });
    for (let i = 0; i < 40; i++) await event(i);
    // A tick ends when its claim finds nothing; on PostgreSQL that includes rows the other deliverer's
    // claim holds locked at that moment (SKIP LOCKED), which the running loop would find at its next
    // round. So the two tick again, as their loops would, until every message was attempted.
    for (let round = 0; round < 20 && receiver.received.length < 40; round++) {
      await Promise.all([a.tick(), b.tick(), a.tick(), b.tick()]);
    }
    assert.equal(receiver.received.length, 40);
    assert.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 40);
    const entries = await log();
    assert.equal(entries.length, 40);
    assert.ok(entries.every((e) => e.attempt === 1));
  });

  // A bound no test waits for: while it runs, an attempt ends only when the test stops its deliverer.
  // Attempts made one after the other (or one endpoint holding every slot) would leave the other
  // endpoint waiting that long, past waitUntil's own timeout; attempts side by side deliver at once,
  // however slow the machine (a bound of seconds raced the other delivery on a loaded one).
  const HELD_MS = 600_000;

  test('an endpoint that answers 200 and trickles its body is cut off at the bound as a timeout; another workspace gets its event meanwhile', async () => {
    const slow = await setup();
    const other = await setup();
    slow.receiver.answer('trickle');
    slow.receiver.trickleMs = 100; // a byte every 100 ms: no pause between bytes would ever end it
    const held = deliverer({ timeoutMs: HELD_MS });
    running.push(held);
    held.start();
    await slow.event();
    held.nudge();
    await waitUntil(() => slow.receiver.received.length === 1, { what: 'the attempt at the slow endpoint' });
    await other.event();
    held.nudge();
    await waitUntil(() => other.receiver.received.length === 1, { what: 'the other endpoint' });
    await waitUntil(async () => (await other.log()).length === 1, { what: "the other endpoint's delivery" });
    assert.equal((await other.log())[0]?.status_code, 204);
    assert.equal((await slow.log()).length, 0, 'the slow attempt is still running');
    // Stopped mid-attempt, the message goes back uncounted; then an attempt under a bound of 3 s, which
    // the trickle, going on for good, meets.
    await held.stop();
    const timeoutMs = 3000;
    await deliverer({ timeoutMs }).tick();
    assert.equal(slow.receiver.received.length, 2);
    const [cut, ...more] = await slow.log();
    assert.deepEqual(more, []);
    assert.equal(cut?.error, 'timeout');
    assert.equal(cut?.status_code, undefined);
    const took = Number(cut?.duration_ms);
    // Far below the deliverer's 15 s default, which a bound not passed on would fall back to.
    assert.ok(took >= timeoutMs - 50 && took < 10_000, `the attempt took ${took} ms`);
    const message = await messageOf(slow.hook.id);
    assert.equal(message.status, 'pending', 'a timeout is tried again');
    assert.equal(message.run_after, clock.now() + 5_000);
    await slow.remove();
  });

  test('a slow endpoint holds only its own slots: two slots, one per endpoint, three stalled events leave one for another', async () => {
    const slow = await setup();
    const other = await setup();
    slow.receiver.answer('hang');
    const d = deliverer({ timeoutMs: HELD_MS, concurrency: 2, perEndpoint: 1 });
    running.push(d);
    d.start();
    for (let i = 0; i < 3; i++) await slow.event(i);
    d.nudge();
    await waitUntil(() => slow.receiver.received.length === 1, { what: 'the attempt at the slow endpoint' });
    await other.event();
    d.nudge();
    await waitUntil(() => other.receiver.received.length === 1, { what: 'the other endpoint' });
    assert.equal(slow.receiver.received.length, 1, 'one attempt at a time at the slow endpoint');
    await d.stop();
    await slow.remove();
  });

  test('an event whose attempts crash is failed after three; an attempt a dead process held counts as one', async () => {
    const { receiver, hook, event, log } = await setup();
    const d = deliverer();
    // A secret that no longer opens: every attempt throws before any request is made.
    await t.services.db.kysely
      .updateTable('webhooks')
      .set({ secret_envelope: 'v1.not-an-envelope' })
      .where('id', '=', hook.id)
      .execute();
    await event();
    await d.tick();
    assert.deepEqual(await messageOf(hook.id), {
      status: 'pending',
      attempts: 1,
      crashes: 1,
      run_after: clock.now() + 5_000,
      lease_owner: null,
    });
    clock.advance(5_000);
    await d.tick();
    clock.advance(300_000);
    await d.tick();
    assert.equal((await messageOf(hook.id)).status, 'failed');
    assert.deepEqual(
      (await log()).map((e) => [e.attempt, e.error]),
      [
        [3, 'crashed'],
        [2, 'crashed'],
        [1, 'crashed'],
      ],
    );
    clock.advance(DAY / 2);
    await d.tick();
    assert.equal((await log()).length, 3, 'a failed event is not tried again');
    assert.equal(receiver.connections, 0);
    assert.match(t.logs.text, /webhook attempt crashed/);

    // Processes that died holding the lease of an event: each lost attempt counts as crashed.
    const again = await setup();
    /** The pending message as a process left it that died in its attempt number `attempts`. */
    const lost = (attempts: number) =>
      t.services.db.kysely
        .updateTable('webhook_messages')
        .set({
          lease_owner: 'dead-process',
          lease_expires_at: clock.now() - 1,
          attempts,
          crashes: attempts - 1,
        })
        .where('webhook_id', '=', again.hook.id)
        .where('status', '=', 'pending')
        .execute();
    await again.event(1);
    await lost(2);
    await d.tick();
    assert.equal(again.receiver.received.length, 1, 'after two lost attempts the third is made');
    assert.equal((await messageOf(again.hook.id)).crashes, 2);
    clock.advance(1000);
    await again.event(2);
    await lost(3);
    await d.tick();
    assert.equal(again.receiver.received.length, 1, 'a third lost attempt ends the event without another');
    const ended = await t.services.db.kysely
      .selectFrom('webhook_messages')
      .select(['status', 'crashes'])
      .where('webhook_id', '=', again.hook.id)
      .where('status', '!=', 'delivered')
      .executeTakeFirstOrThrow();
    assert.deepEqual(ended, { status: 'failed', crashes: 3 });
    assert.equal((await again.log())[0]?.error, 'crashed');
  });
});
