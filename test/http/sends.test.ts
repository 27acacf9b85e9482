// Send through HTTP on both databases: a real SMTP server (smtp-server) receives the mail, mailparser
// reads it, and the test follows its link to download the file with its password. The dispatcher is
// stepped by hand on an injected clock: retries after 421, failure after 550, a scheduled send that
// outlives its process, the hourly recipient limit, and the validation of every field. Its wake-ups
// run on their own and are waited for by the mail they bring out: a new scheduled send wakes a
// sleeping dispatcher, and a wake-up during its read of the next due time is not lost.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import type { KyselyPlugin } from 'kysely';
import { Registry } from 'prom-client';
import { type Db, openDatabase } from '../../src/db/database.js';
import { SendDispatcher } from '../../src/domain/sends/dispatcher.js';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { deferred } from '../support/deferred.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { TestSmtp } from '../support/smtp.js';
import { type Call, createLocation, newWorkspace, s3Client, seedBucket } from '../support/transfers.js';

const PUBLIC_URL = 'https://files.example.test';
const FILE = randomBytes(50_000);
const HOUR = 3_600_000;

/** A dispatcher stepped by hand; `db` and `registry` in place of the app's, when given. */
function dispatcherFor(
  t: TestApp,
  clock: ManualClock,
  { db = t.services.db, registry = t.services.metrics }: { db?: Db; registry?: Registry } = {},
): SendDispatcher {
  const mailer = t.services.mailer;
  assert.ok(mailer, 'FERRY_SMTP_URL is set');
  return new SendDispatcher(
    {
      db,
      clock,
      logger: t.services.logger,
      shares: t.services.shares,
      mailer,
      owner: unique('test-worker'),
      from: t.config.mail.from,
      registry,
      random: () => 0,
    },
    { pollMs: HOUR },
  );
}

await eachDatabase('send', (database) => {
  const clock = new ManualClock(Date.parse('2026-11-24T15:00:00Z'));
  let t: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let smtp: TestSmtp;
  let dispatcher: SendDispatcher;
  let bucket: string;
  let env: Record<string, string>;

  before(async () => {
    [s3, smtp] = await Promise.all([startS3rver(), new TestSmtp().start()]);
    client = s3Client(s3.endpoint);
    env = {
      FERRY_EGRESS_ALLOW: '127.0.0.1/32',
      FERRY_PUBLIC_URL: PUBLIC_URL,
      FERRY_SMTP_URL: smtp.url,
      FERRY_SEND_RECIPIENTS_PER_HOUR: '6',
    };
    t = await startTestApp(database, { clock, env });
    dispatcher = dispatcherFor(t, clock);
    bucket = await seedBucket(client, { 'out/report.bin': FILE, 'out/a1.txt': '1', 'out/a2.txt': '2' });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await Promise.all([s3.close(), smtp.close()]);
  });

  async function workspace(): Promise<{ call: Call; label: string }> {
    const call = await newWorkspace(t);
    const { label } = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
      metadata: { endpoint: s3.endpoint },
    });
    return { call, label };
  }
  const status = async (call: Call, id: string) =>
    (await call({ method: 'GET', url: `/v1/sends/${id}` })).json();

  test('to and cc get one message as composed, bcc only by envelope; reply-to, text and escaped HTML; the link downloads the file with its password, which the mail never holds, and expires 7 days after the mail goes out when no expires_at is given', async () => {
    const { call, label } = await workspace();
    const password = `pw-${randomBytes(4).toString('hex')}`;
    const before = smtp.received.length;
    const res = await call({
      method: 'POST',
      url: '/send',
      payload: {
        source: `${label}/${bucket}/out/report.bin`,
        to: ['ann@example.com', 'bob@example.com'],
        cc: 'cy@example.com',
        bcc: ['hidden@example.com'],
        replyTo: 'sender@example.com',
        text: 'Here is the <b>report</b> & the numbers',
        password,
      },
    });
    assert.equal(res.statusCode, 202, res.body);
    const accepted = res.json();
    assert.deepEqual(Object.keys(accepted).sort(), ['expires_at', 'id', 'status']);
    assert.equal(accepted.status, 'queued');
    // No expires_at given: the link stops working 7 days after the mail goes out (now).
    const weekOn = new Date(clock.now() + 7 * 24 * HOUR).toISOString();
    assert.equal(accepted.expires_at, weekOn);
    await dispatcher.tick();
    const sent = await status(call, accepted.id);
    assert.equal(sent.status, 'sent', JSON.stringify(sent));
    assert.equal(sent.sent_at, new Date(clock.now()).toISOString());

    assert.equal(smtp.received.length, before + 1, 'one message for everyone');
    const got = smtp.received.at(-1);
    assert.ok(got);
    assert.deepEqual(got.envelope.to.sort(), [
      'ann@example.com',
      'bob@example.com',
      'cy@example.com',
      'hidden@example.com',
    ]);
    assert.equal(got.envelope.from, 'ferry@files.example.test');
    const addressesOf = (value: unknown) =>
      ((Array.isArray(value) ? value : [value]) as Array<{ value: Array<{ address: string }> }>).flatMap(
        (a) => a.value.map((v) => v.address),
      );
    assert.deepEqual(addressesOf(got.mail.to), ['ann@example.com', 'bob@example.com']);
    assert.deepEqual(addressesOf(got.mail.cc), ['cy@example.com']);
    assert.deepEqual(addressesOf(got.mail.replyTo), ['sender@example.com']);
    assert.equal(got.mail.bcc, undefined);
    assert.equal(got.raw.includes('hidden@example.com'), false, 'bcc is not in the message');
    assert.equal(got.mail.messageId, `<${accepted.id}@files.example.test>`);
    const { name: workspaceName } = await t.services.db.kysely
      .selectFrom('sends')
      .innerJoin('workspaces', 'workspaces.id', 'sends.workspace_id')
      .select('workspaces.name')
      .where('sends.id', '=', accepted.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(got.mail.from?.value, [
      { name: `${workspaceName} via ferry`, address: 'ferry@files.example.test' },
    ]);
    assert.equal(got.mail.subject, `${workspaceName} shared "report.bin" with you`);
    assert.match(String(got.mail.text), /Here is the <b>report<\/b> & the numbers/);
    assert.match(String(got.mail.text), /\(49 KiB\)/);
    assert.match(String(got.mail.html), /Here is the &lt;b&gt;report&lt;\/b&gt; &amp; the numbers/);
    assert.equal(got.raw.includes(password), false, 'the password is never in the mail');

    const url = /https:\/\/files\.example\.test\/s\/[A-Za-z0-9_-]{43}/.exec(String(got.mail.text))?.[0];
    assert.ok(url, 'the mail has the link');
    const path = new URL(url).pathname;
    assert.match((await t.app.inject({ method: 'GET', url: path })).body, /<form/);
    const download = await t.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `password=${encodeURIComponent(password)}`,
    });
    assert.equal(download.statusCode, 200);
    assert.deepEqual(download.rawPayload, FILE);
    const link = (await call({ method: 'GET', url: '/v1/shares' })).json().shares[0];
    assert.equal(link.expires_at, weekOn, 'the link made for the send expires then');
    assert.equal((await status(call, accepted.id)).expires_at, weekOn);
    await dispatcher.tick();
    assert.equal(smtp.received.length, before + 1, 'delivered once');
  });

  test('a server that answers 421 and then accepts: retried after a backoff, delivered once', async () => {
    const { call, label } = await workspace();
    const before = smtp.received.length;
    smtp.failNext('data', 421, 'Service not available, try again later');
    const res = await call({
      method: 'POST',
      url: '/send',
      payload: { source: `${label}/${bucket}/out/a1.txt`, to: 'ann@example.com' },
    });
    const id = res.json().id;
    await dispatcher.tick();
    const waiting = await status(call, id);
    assert.equal(waiting.status, 'queued');
    assert.match(waiting.error, /421/);
    await dispatcher.tick();
    assert.equal(smtp.received.length, before, 'not before its backoff');
    clock.advance(30_001);
    await dispatcher.tick();
    assert.equal((await status(call, id)).status, 'sent');
    assert.equal(smtp.received.length, before + 1);
    const metrics = await t.request({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /ferry_sends_total\{outcome="retried"\} [1-9]/);
    assert.match(metrics.body, /ferry_sends_total\{outcome="sent"\} [1-9]/);
  });

  test('a server that answers 550 fails the send with its reply; a refused recipient among accepted ones is listed', async () => {
    const { call, label } = await workspace();
    smtp.failNext('data', 550, 'Message rejected as spam');
    const res = await call({
      method: 'POST',
      url: '/send',
      payload: { source: `${label}/${bucket}/out/a1.txt`, to: 'ann@example.com' },
    });
    await dispatcher.tick();
    const failed = await status(call, res.json().id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.error, /550/);
    assert.match(failed.error, /rejected as spam/);
    clock.advance(HOUR);
    await dispatcher.tick();
    assert.equal((await status(call, res.json().id)).status, 'failed', 'never tried again');

    const { call: other, label: otherLabel } = await workspace();
    smtp.failNext('rcpt', 550, 'No such user here', 'nobody@example.com');
    const partial = await other({
      method: 'POST',
      url: '/send',
      payload: {
        source: `${otherLabel}/${bucket}/out/a1.txt`,
        to: ['ann@example.com', 'nobody@example.com'],
      },
    });
    await dispatcher.tick();
    const sent = await status(other, partial.json().id);
    assert.equal(sent.status, 'sent');
    assert.deepEqual(sent.refused, ['nobody@example.com']);
  });

  test('a scheduled send answers its resolved time, waits for it, outlives the process that accepted it, and is delivered once', async () => {
    const { call, label } = await workspace();
    const res = await call({
      method: 'POST',
      url: '/send',
      payload: {
        source: `${label}/${bucket}/out/a2.txt`,
        to: 'ann@example.com',
        scheduledAt: 'tomorrow at 9am',
        timezone: 'Europe/Paris',
      },
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(res.json(), {
      id: res.json().id,
      status: 'scheduled',
      scheduled_at: '2026-11-25T08:00:00.000Z',
      expires_at: '2026-12-02T08:00:00.000Z',
    });
    const before = smtp.received.length;
    await dispatcher.tick();
    assert.equal(smtp.received.length, before, 'not before its time');

    // Another process on the same database (SQLite file or PostgreSQL schema) takes over.
    const restarted = await startTestApp(database, { clock, env, shareWith: t });
    try {
      const next = dispatcherFor(restarted, clock);
      clock.set(Date.parse('2026-11-25T08:00:00Z'));
      await next.tick();
      await dispatcher.tick();
      assert.equal(smtp.received.length, before + 1, 'delivered once, at its time');
      assert.equal((await status(call, res.json().id)).status, 'sent');
    } finally {
      await restarted.close();
    }
  });

  test('a new scheduled send wakes a sleeping dispatcher, which then goes out at its time rather than at its next poll', {
    timeout: 20_000,
  }, async (context) => {
    // A process that serves and works (FERRY_ROLE=all) on the system clock, whose dispatcher would
    // otherwise sleep an hour: the send can only come out in time if POST /send wakes it to plan again.
    const live = await startTestApp(database, { env, worker: true, sendPollMs: HOUR });
    try {
      const call = await newWorkspace(live);
      const { label } = await createLocation(call, {
        provider: 's3',
        secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
        metadata: { endpoint: s3.endpoint },
      });
      const to = `${unique('soon')}@example.com`;
      const due = new Date(Date.now() + 2000).toISOString();
      const res = await call({
        method: 'POST',
        url: '/send',
        payload: { source: `${label}/${bucket}/out/a1.txt`, to, scheduledAt: due },
      });
      assert.equal(res.statusCode, 202, res.body);
      assert.deepEqual(res.json(), {
        id: res.json().id,
        status: 'scheduled',
        scheduled_at: due,
        expires_at: new Date(Date.parse(due) + 7 * 24 * HOUR).toISOString(),
      });
      const got = await smtp.message((m) => m.envelope.to.includes(to), context.signal);
      assert.ok(got.at >= Date.parse(due), `not before its time: ${new Date(got.at).toISOString()}`);
    } finally {
      await live.close();
    }
  });

  test('at most FERRY_SEND_RECIPIENTS_PER_HOUR recipients per workspace: then 429 with Retry-After', async () => {
    const { call, label } = await workspace();
    const send = (to: string[]) =>
      call({ method: 'POST', url: '/send', payload: { source: `${label}/${bucket}/out/a1.txt`, to } });
    assert.equal((await send(['a@example.com', 'b@example.com', 'c@example.com'])).statusCode, 202);
    clock.advance(10 * 60_000);
    assert.equal((await send(['d@example.com', 'e@example.com'])).statusCode, 202);
    const limited = await send(['f@example.com', 'g@example.com']);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['retry-after'], String(50 * 60));
    clock.advance(50 * 60_000 + 1);
    assert.equal((await send(['f@example.com', 'g@example.com'])).statusCode, 202);
    await dispatcher.tick();
  });

  test('every field is checked before anything is stored: 400s, 404, and 503 without FERRY_SMTP_URL', async () => {
    const { call, label } = await workspace();
    const source = `${label}/${bucket}/out/a1.txt`;
    const send = (payload: Record<string, unknown>) =>
      call({ method: 'POST', url: '/send', payload: { source, to: 'ann@example.com', ...payload } });
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ to: Array.from({ length: 51 }, (_, i) => `p${i}@example.com`) }, 400, /to/],
      [{ to: [] }, 400, /to/],
      [{ to: 'not an address' }, 400, /not an e-mail address/],
      [{ cc: ['ok@example.com', 'bad@'] }, 400, /cc/],
      [{ scheduledAt: 'yesterday' }, 400, /in the past/],
      [{ scheduledAt: 'when pigs fly' }, 400, /not a time/],
      [{ scheduledAt: 'in 2 years' }, 400, /a year ahead/],
      [{ timezone: 'Mars/Olympus' }, 400, /IANA/],
      [{ source: `${label}/${bucket}/out/a*.txt` }, 400, /matches 2 files/],
      [{ source: `${label}/${bucket}/out/none.txt` }, 404, /./],
      [{ subject: 'x' }, 400, /./],
    ];
    for (const [payload, code, message] of cases) {
      const res = await send(payload);
      assert.equal(res.statusCode, code, `${JSON.stringify(payload).slice(0, 60)}: ${res.body}`);
      assert.match(res.json().message, message);
    }
    const rows = await t.services.db.kysely.selectFrom('sends').select('id').execute();
    const withoutSmtp = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32' } });
    try {
      const res = await withoutSmtp.request({
        method: 'POST',
        url: '/send',
        payload: { source: 'x/y', to: 'ann@example.com' },
      });
      assert.equal(res.statusCode, 503);
      assert.match(res.json().message, /FERRY_SMTP_URL/);
    } finally {
      await withoutSmtp.close();
    }
    assert.equal((await t.services.db.kysely.selectFrom('sends').select('id').execute()).length, rows.length);
  });
  test('a wake-up that comes while the dispatcher reads when the next send is due is not lost', {
    timeout: 20_000,
  }, async (context) => {
    // The dispatcher's read of the next due time is held until a send was accepted and the wake-up
    // given, so what it read is out of date: only the wake-up can bring the send out before its
    // hour-long sleep ends.
    const reading = deferred();
    const release = deferred();
    const held = new Set<string>();
    let armed = true;
    const hold: KyselyPlugin = {
      transformQuery({ node, queryId }) {
        if (node.kind === 'RawNode' && node.sqlFragments.join('').includes('as next_due'))
          held.add(queryId.queryId);
        return node;
      },
      async transformResult({ result, queryId }) {
        if (armed && held.has(queryId.queryId)) {
          armed = false;
          reading.resolve();
          await release.promise;
        }
        return result;
      },
    };
    // A connection of its own, as another process would have (SQLite allows one query at a time on
    // a connection, and the held one keeps it).
    const own = openDatabase({ dataDir: t.config.dataDir, databaseUrl: t.config.databaseUrl });
    const db: Db = { ...own, kysely: own.kysely.withPlugin(hold) };
    const sleepy = dispatcherFor(t, clock, { db, registry: new Registry() });
    sleepy.start();
    try {
      await reading.promise;
      const { call, label } = await workspace();
      const to = `${unique('woken')}@example.com`;
      const res = await call({
        method: 'POST',
        url: '/send',
        payload: { source: `${label}/${bucket}/out/a1.txt`, to },
      });
      assert.equal(res.statusCode, 202, res.body);
      sleepy.nudge();
      release.resolve();
      await smtp.message((m) => m.envelope.to.includes(to), context.signal);
    } finally {
      release.resolve();
      await sleepy.stop();
      await own.close();
    }
  });

  test('a send whose lease another process holds is next due when that lease ends, not at once', async () => {
    const { call, label } = await workspace();
    const res = await call({
      method: 'POST',
      url: '/send',
      payload: { source: `${label}/${bucket}/out/a1.txt`, to: `${unique('held')}@example.com` },
    });
    assert.equal(res.statusCode, 202, res.body);
    const { id } = res.json();
    const db = t.services.db.kysely;
    const until = clock.now() + 60_000;
    await db
      .updateTable('sends')
      .set({ lease_owner: 'another-process', lease_expires_at: until })
      .where('id', '=', id)
      .execute();
    try {
      assert.equal(await dispatcher.nextDue(), until);
    } finally {
      await db.deleteFrom('sends').where('id', '=', id).execute();
    }
  });

  test("GET /v1/sends lists the workspace's sends newest first, paged, and never another workspace's", async () => {
    const { call, label } = await workspace();
    const other = await workspace();
    const accept = async (c: Call, l: string) => {
      const res = await c({
        method: 'POST',
        url: '/send',
        payload: {
          source: `${l}/${bucket}/out/a2.txt`,
          to: `${unique('listed')}@example.com`,
          scheduledAt: 'in 2 days',
        },
      });
      assert.equal(res.statusCode, 202, res.body);
      return res.json().id as string;
    };
    const first = await accept(call, label);
    clock.advance(1000);
    const second = await accept(call, label);
    const foreign = await accept(other.call, other.label);
    try {
      const page1 = (await call({ method: 'GET', url: '/v1/sends?limit=1' })).json();
      assert.deepEqual(
        page1.sends.map((s: { id: string }) => s.id),
        [second],
      );
      assert.equal(page1.sends[0].status, 'scheduled');
      assert.deepEqual(
        { ...page1.sends[0], scheduled_at: undefined, expires_at: undefined },
        {
          id: second,
          status: 'scheduled',
          scheduled_at: undefined,
          expires_at: undefined,
          source: `${label}/${bucket}/out/a2.txt`,
          file_name: 'a2.txt',
          recipients: 1,
          created_at: new Date(clock.now()).toISOString(),
        },
      );
      assert.ok(Date.parse(page1.sends[0].scheduled_at) > clock.now() + 24 * HOUR, 'scheduled_at');
      const page2 = (
        await call({ method: 'GET', url: `/v1/sends?limit=1&cursor=${page1.next_cursor}` })
      ).json();
      assert.deepEqual(
        page2.sends.map((s: { id: string }) => s.id),
        [first],
      );
      assert.equal(page2.next_cursor, undefined);
      const theirs = (await other.call({ method: 'GET', url: '/v1/sends' })).json();
      assert.deepEqual(
        theirs.sends.map((s: { id: string }) => s.id),
        [foreign],
      );
    } finally {
      await t.services.db.kysely.deleteFrom('sends').where('id', 'in', [first, second, foreign]).execute();
    }
  });

  test('POST /v1/sends/{id}/cancel: a scheduled or unclaimed queued send is canceled and never mailed; a claimed, sent or canceled one is 409 saying why; one write decides the race with a claim', async () => {
    const { call, label } = await workspace();
    const other = await workspace();
    const accept = async (payload: Record<string, unknown>) => {
      const res = await call({
        method: 'POST',
        url: '/send',
        payload: {
          source: `${label}/${bucket}/out/a1.txt`,
          to: `${unique('cancel')}@example.com`,
          ...payload,
        },
      });
      assert.equal(res.statusCode, 202, res.body);
      return res.json().id as string;
    };
    const cancel = (id: string, c: Call = call) => c({ method: 'POST', url: `/v1/sends/${id}/cancel` });
    const scheduled = await accept({ scheduledAt: 'in 2 hours' });
    const queued = await accept({});
    const held = await accept({});
    const db = t.services.db.kysely;
    await db
      .updateTable('sends')
      .set({ lease_owner: 'another-process', lease_expires_at: clock.now() + 10 * HOUR })
      .where('id', '=', held)
      .execute();
    try {
      assert.equal((await cancel(scheduled, other.call)).statusCode, 404, 'not another workspace’s');
      assert.equal((await cancel('nope')).statusCode, 404);
      const before = smtp.received.length;
      const res = await cancel(scheduled);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'canceled');
      assert.equal(res.json().source, `${label}/${bucket}/out/a1.txt`);
      const again = await cancel(scheduled);
      assert.equal(again.statusCode, 409);
      assert.match(again.json().message, /already canceled/);
      assert.equal((await cancel(queued)).json().status, 'canceled');
      const claimed = await cancel(held);
      assert.equal(claimed.statusCode, 409);
      assert.match(claimed.json().message, /being delivered now/);
      clock.advance(3 * HOUR);
      await dispatcher.tick();
      assert.equal(smtp.received.length, before, 'a canceled send is never mailed');
      assert.equal((await status(call, scheduled)).status, 'canceled');
      assert.equal((await status(call, queued)).status, 'canceled');
      // Sent: 409.
      const sent = await accept({});
      await dispatcher.tick();
      assert.equal((await status(call, sent)).status, 'sent');
      const late = await cancel(sent);
      assert.equal(late.statusCode, 409);
      assert.match(late.json().message, /already sent/);
      // The race: a claim and a cancel at once; exactly one of them wins, on either database.
      for (let i = 0; i < 5; i++) {
        const raced = await accept({});
        const before = smtp.received.length;
        const [answer] = await Promise.all([cancel(raced), dispatcher.tick()]);
        const mailed = smtp.received.length - before;
        const final = (await status(call, raced)).status;
        if (answer.statusCode === 200) {
          assert.equal(mailed, 0, 'canceled and mailed');
          assert.equal(final, 'canceled');
        } else {
          assert.equal(answer.statusCode, 409, answer.body);
          assert.equal(mailed, 1);
          assert.equal(final, 'sent');
        }
      }
    } finally {
      await db.deleteFrom('sends').where('id', 'in', [scheduled, queued, held]).execute();
    }
  });

  test('sender_name names who shares in From and the subject; CR, LF and control characters are refused, and a workspace name holding them cannot add a header', async () => {
    const { call, label } = await workspace();
    const source = `${label}/${bucket}/out/a1.txt`;
    for (const bad of ['Ann\r\nBcc: evil@example.com', 'Ann\nX', 'A\u0000nn', ' ', 'x'.repeat(101)]) {
      const res = await call({
        method: 'POST',
        url: '/send',
        payload: { source, to: 'ann@example.com', sender_name: bad },
      });
      assert.equal(res.statusCode, 400, JSON.stringify(bad));
      assert.match(res.json().message, /sender_name/);
    }
    const to = `${unique('named')}@example.com`;
    const named = await call({
      method: 'POST',
      url: '/send',
      payload: { source, to, sender_name: 'Ann Éxample, "Finance"' },
    });
    assert.equal(named.statusCode, 202, named.body);
    await dispatcher.tick();
    const got = smtp.received.find((m) => m.envelope.to.includes(to));
    assert.ok(got);
    assert.deepEqual(got.mail.from?.value, [
      { name: 'Ann Éxample, "Finance" via ferry', address: 'ferry@files.example.test' },
    ]);
    assert.equal(got.mail.subject, 'Ann Éxample, "Finance" shared "a1.txt" with you');

    // A workspace whose name holds a line break and a header: still one From, no Bcc, no extra address.
    const other = await workspace();
    const sneaky = `${unique('sneaky')}@example.com`;
    const res = await other.call({
      method: 'POST',
      url: '/send',
      payload: { source: `${other.label}/${bucket}/out/a1.txt`, to: sneaky },
    });
    assert.equal(res.statusCode, 202, res.body);
    const db = t.services.db.kysely;
    const row = await db
      .selectFrom('sends')
      .select('workspace_id')
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow();
    await db
      .updateTable('workspaces')
      .set({ name: 'Evil\r\nBcc: evil@example.com\r\nSubject: hi' })
      .where('id', '=', row.workspace_id)
      .execute();
    await dispatcher.tick();
    const mail = smtp.received.find((m) => m.envelope.to.includes(sneaky));
    assert.ok(mail);
    assert.deepEqual(mail.envelope.to, [sneaky]);
    assert.equal(mail.mail.bcc, undefined);
    assert.doesNotMatch(mail.raw, /\r\nBcc:/i);
    assert.equal(mail.mail.from?.value.length, 1);
    assert.equal(mail.mail.from?.value[0]?.address, 'ferry@files.example.test');
    assert.match(
      String(mail.mail.subject),
      /^Evil Bcc: evil@example\.com Subject: hi shared "a1\.txt" with you$/,
    );
  });
});
