// The audit log's records (docs/api.md, "Audit log"), table-driven over /openapi.json on both databases,
// read from audit_events directly: every operation that changes something is in the table below with a
// request that succeeds, and that request adds exactly one row (its action, target, status, key,
// address and user agent); a dry run that makes a plan adds one plan.create, and a plan's run is
// recorded as the action it performs; a preview or a read adds none, nor does a failed request. An
// operation added to /openapi.json without a row here fails the first test. A record that cannot be
// written takes its change with it (a trigger makes the insert fail), and no row holds a secret.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import type { AuditAction } from '../../src/domain/audit/audit.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { TestSmtp } from '../support/smtp.js';
import { s3Client, seedBucket } from '../support/transfers.js';

const USER_AGENT = 'audit-test/1.0 (+walk)';
const SHARE_PASSWORD = 'correct horse battery staple 42';

interface Row {
  /** A request that succeeds (its preparation, made first, may record rows of its own). */
  sample: () => Promise<InjectOptions>;
  action: AuditAction;
  status: number;
  /** The target the row names, from the request and its answer. */
  target: (options: InjectOptions, res: LightMyRequestResponse) => string;
  /** The same operation made a read by its body: a dry run. */
  read?: () => Promise<InjectOptions>;
}

/** The operations that are not GET or HEAD and change nothing: reads by POST, and previews. */
const READS = [
  'POST /v1/locations/get',
  'POST /v1/locations/status',
  'POST /v1/list',
  'POST /remove/preview',
  'POST /move/preview',
];

eachDatabase('the audit record of every change', (database) => {
  let t: TestApp;
  let s3: S3rverHandle;
  let smtp: TestSmtp;
  let client: S3Client;
  before(async () => {
    [s3, smtp] = await Promise.all([startS3rver(), new TestSmtp().start()]);
    client = s3Client(s3.endpoint);
    t = await startTestApp(database, {
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_SMTP_URL: smtp.url },
    });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await Promise.all([s3.close(), smtp.close()]);
  });

  const db = () => t.services.db.kysely;

  /** A workspace and its key, a location over a seeded bucket, and helpers that prepare samples. */
  async function world() {
    const workspace = await ensureWorkspace(db(), unique('ws'), t.services.clock);
    const key = await t.services.apiKeys.create(workspace.id, { name: 'audited' });
    const call = (options: InjectOptions) =>
      t.request({
        ...options,
        token: key.token,
        headers: { 'user-agent': USER_AGENT, ...(options.headers ?? {}) },
      });
    const secretKey = unique('secret-access-key');
    const secret = { access_key_id: 'AKIDSAME', secret_access_key: secretKey };
    const metadata = { endpoint: s3.endpoint };
    const post = async (url: string, payload: unknown) => {
      const res = await call({ method: 'POST', url, payload: payload as Record<string, unknown> });
      assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };
    const newLocation = async (): Promise<{ id: string; label: string }> => {
      const label = unique('loc');
      const made = await post('/v1/locations', { provider: 's3', label, secret, metadata });
      return { id: made.id, label };
    };
    const loc = await newLocation();
    const bucket = await seedBucket(client, {
      'in/a.txt': 'alpha',
      'in/b.txt': 'bravo',
      'rm/c.txt': 'charlie',
    });
    const at = (path: string) => `${loc.label}/${bucket}/${path}`;
    const colon = (path: string) => `${loc.label}:${bucket}/${path}`;
    const rows = async () =>
      db().selectFrom('audit_events').selectAll().where('workspace_id', '=', workspace.id).execute();
    return {
      workspace,
      key,
      call,
      post,
      secret,
      secretKey,
      loc,
      bucket,
      at,
      colon,
      newLocation,
      rows,
      copy: () => post('/v1/copy', { from: colon('in/'), to: colon(`${unique('out')}/`) }),
      share: () => post('/share', { file: at('in/a.txt') }),
      send: () =>
        post('/send', { source: at('in/a.txt'), to: ['ann@example.com'], scheduledAt: 'in 2 hours' }),
      hook: () => post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['job.complete'] }),
      schedule: () =>
        post('/v1/schedules', {
          name: unique('s'),
          every: 'every day at 02:00',
          action: { copy: { from: colon('in/'), to: colon(`${unique('nightly')}/`) } },
        }),
    };
  }
  type World = Awaited<ReturnType<typeof world>>;

  const json = (
    method: NonNullable<InjectOptions['method']>,
    url: string,
    payload?: unknown,
  ): InjectOptions => ({
    method,
    url,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
  const bodyOf = (o: InjectOptions) => o.payload as Record<string, string>;
  const answer = (_o: InjectOptions, res: LightMyRequestResponse) => res.json().id as string;
  const bodyId = (o: InjectOptions) => bodyOf(o).id as string;
  const urlId = (o: InjectOptions) => (o.url as string).split('/')[3] as string;
  const jobOf = (_o: InjectOptions, res: LightMyRequestResponse) => res.json().job_id as string;

  /** The copy plan the sample of a plan's run made: its destination and how many objects it copies. */
  let planned: { to: string; copies: number } | undefined;

  /** Every operation of /openapi.json that changes something, as `METHOD path`. */
  const table = (w: World): Record<string, Row> => ({
    'POST /v1/locations': {
      sample: async () =>
        json('POST', '/v1/locations', {
          provider: 's3',
          label: unique('new'),
          secret: w.secret,
          metadata: { endpoint: s3.endpoint },
        }),
      action: 'location.create',
      status: 201,
      target: answer,
    },
    'PUT /v1/locations': {
      sample: async () => json('PUT', '/v1/locations', { id: (await w.newLocation()).id, secret: w.secret }),
      action: 'location.replace',
      status: 200,
      target: bodyId,
    },
    'PATCH /v1/locations': {
      sample: async () =>
        json('PATCH', '/v1/locations', { id: (await w.newLocation()).id, label: unique('renamed') }),
      action: 'location.rename',
      status: 200,
      target: bodyId,
    },
    'DELETE /v1/locations': {
      sample: async () => json('DELETE', '/v1/locations', { id: (await w.newLocation()).id }),
      action: 'location.delete',
      status: 204,
      target: bodyId,
    },
    'POST /v1/locations/refresh': {
      sample: async () => json('POST', '/v1/locations/refresh', { id: w.loc.id }),
      action: 'location.refresh',
      status: 202,
      target: bodyId,
    },
    'POST /v1/buckets': {
      sample: async () => json('POST', '/v1/buckets', { id: w.loc.id, bucket: unique('nb').toLowerCase() }),
      action: 'bucket.create',
      status: 201,
      target: (o) => `${w.loc.label}/${bodyOf(o).bucket}`,
    },
    'PUT /v1/files/{location}/{path}': {
      sample: async () => ({
        method: 'PUT',
        url: `/v1/files/${w.loc.id}/${w.bucket}/up/${unique('f')}.txt`,
        payload: 'uploaded',
        headers: { 'content-type': 'application/octet-stream' },
      }),
      action: 'file.upload',
      status: 201,
      target: (o) => `${w.loc.label}/${(o.url as string).split('/').slice(4).join('/')}`,
    },
    'POST /v1/tokens': {
      sample: async () => json('POST', '/v1/tokens', { name: unique('k') }),
      action: 'key.create',
      status: 201,
      target: answer,
    },
    'PATCH /v1/tokens/{id}': {
      sample: async () => {
        const made = await w.post('/v1/tokens', { name: unique('k') });
        return json('PATCH', `/v1/tokens/${made.id}`, { name: unique('renamed') });
      },
      action: 'key.update',
      status: 204,
      target: urlId,
    },
    'DELETE /v1/tokens/{id}': {
      sample: async () =>
        json('DELETE', `/v1/tokens/${(await w.post('/v1/tokens', { name: unique('k') })).id}`),
      action: 'key.revoke',
      status: 204,
      target: urlId,
    },
    'POST /v1/copy': {
      sample: async () => json('POST', '/v1/copy', { from: w.colon('in/'), to: w.colon(`${unique('c')}/`) }),
      action: 'copy',
      status: 202,
      target: jobOf,
      read: async () =>
        json('POST', '/v1/copy', { from: w.colon('in/'), to: w.colon(`${unique('c')}/`), dry_run: true }),
    },
    'POST /v1/sync': {
      sample: async () => json('POST', '/v1/sync', { from: w.colon('in/'), to: w.colon(`${unique('s')}/`) }),
      action: 'sync',
      status: 202,
      target: jobOf,
      read: async () =>
        json('POST', '/v1/sync', { from: w.colon('in/'), to: w.colon(`${unique('s')}/`), dry_run: true }),
    },
    'POST /v1/verify': {
      sample: async () =>
        json('POST', '/v1/verify', { from: w.colon('in/'), to: w.colon(`${unique('v')}/`) }),
      action: 'verify',
      status: 202,
      target: jobOf,
    },
    'POST /pull': {
      sample: async () =>
        json('POST', '/pull', {
          from: [`${s3.endpoint}/${w.bucket}/in/a.txt`],
          to: w.at(`${unique('pl')}/`),
        }),
      action: 'pull',
      status: 200,
      target: answer,
    },
    'POST /move': {
      sample: async () => json('POST', '/move', { from: w.at('in/b.txt'), to: w.at(`${unique('mv')}/`) }),
      action: 'move',
      status: 202,
      target: (o) => bodyOf(o).from as string,
      read: async () => json('POST', '/move', { from: w.at('in/*.txt'), to: w.at('moved/'), dry_run: true }),
    },
    'POST /remove': {
      sample: async () => json('POST', '/remove', { path: w.at('rm/c.txt') }),
      action: 'remove',
      status: 202,
      target: (o) => bodyOf(o).path as string,
      read: async () => json('POST', '/remove', { path: w.at('rm/**'), dry_run: true }),
    },
    'POST /v1/transfers/{id}/retry': {
      sample: async () => {
        // A transfer over several objects, run by a job, that failed (no worker runs here: set so).
        const moved = await w.post('/move', { from: w.at('in/*.txt'), to: w.at(`${unique('f')}/`) });
        await db().updateTable('transfers').set({ status: 'failed' }).where('id', '=', moved.id).execute();
        await db()
          .updateTable('jobs')
          .set({ status: 'failed' })
          .where('transfer_id', '=', moved.id)
          .execute();
        return json('POST', `/v1/transfers/${moved.id}/retry`);
      },
      action: 'transfer.retry',
      status: 202,
      target: urlId,
    },
    'POST /v1/jobs/{id}/retry': {
      sample: async () => {
        const { job_id } = await w.copy();
        await db().updateTable('jobs').set({ status: 'failed' }).where('id', '=', job_id).execute();
        return json('POST', `/v1/jobs/${job_id}/retry`);
      },
      action: 'job.retry',
      status: 202,
      target: urlId,
    },
    'POST /v1/jobs/{id}/undo': {
      sample: async () => {
        // A finished job (no worker runs here: set so) that touched nothing yet: its undo is accepted.
        const { job_id } = await w.copy();
        await db().updateTable('jobs').set({ status: 'complete' }).where('id', '=', job_id).execute();
        return json('POST', `/v1/jobs/${job_id}/undo`);
      },
      action: 'job.undo',
      status: 202,
      target: urlId,
    },
    'POST /v1/jobs/{id}/cancel': {
      sample: async () => json('POST', `/v1/jobs/${(await w.copy()).job_id}/cancel`),
      action: 'job.cancel',
      status: 202,
      target: urlId,
    },
    'POST /v1/plans/{id}/run': {
      sample: async () => {
        const to = `${unique('p')}/`;
        const plan = await w.post('/v1/copy', { from: w.colon('in/'), to: w.colon(to), dry_run: true });
        planned = { to, copies: plan.counts.copy };
        return json('POST', `/v1/plans/${plan.plan_id}/run`);
      },
      // Recorded as what it does: a copy plan's run is a copy, from and to (docs/api.md, "Audit log").
      action: 'copy',
      status: 202,
      target: (o) =>
        `${w.loc.label}/${w.bucket}/in/ → ${w.loc.label}/${w.bucket}/${planned?.to} (${planned?.copies} copy; plan ${urlId(o)})`,
    },
    'POST /share': {
      sample: async () => json('POST', '/share', { file: w.at('in/a.txt'), password: SHARE_PASSWORD }),
      action: 'share.create',
      status: 201,
      target: answer,
    },
    'DELETE /v1/shares/{id}': {
      sample: async () => json('DELETE', `/v1/shares/${(await w.share()).id}`),
      action: 'share.revoke',
      status: 204,
      target: urlId,
    },
    'POST /send': {
      sample: async () =>
        json('POST', '/send', {
          source: w.at('in/a.txt'),
          to: ['ann@example.com'],
          scheduledAt: 'in 3 hours',
          password: SHARE_PASSWORD,
        }),
      action: 'send.create',
      status: 202,
      target: answer,
    },
    'POST /v1/sends/{id}/cancel': {
      sample: async () => json('POST', `/v1/sends/${(await w.send()).id}/cancel`),
      action: 'send.cancel',
      status: 200,
      target: urlId,
    },
    'POST /v1/webhooks': {
      sample: async () =>
        json('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['job.complete'] }),
      action: 'webhook.create',
      status: 201,
      target: answer,
    },
    'PATCH /v1/webhooks/{id}': {
      sample: async () => json('PATCH', `/v1/webhooks/${(await w.hook()).id}`, { events: ['job.failed'] }),
      action: 'webhook.update',
      status: 200,
      target: urlId,
    },
    'DELETE /v1/webhooks/{id}': {
      sample: async () => json('DELETE', `/v1/webhooks/${(await w.hook()).id}`),
      action: 'webhook.delete',
      status: 204,
      target: urlId,
    },
    'POST /v1/schedules': {
      sample: async () =>
        json('POST', '/v1/schedules', {
          name: unique('s'),
          every: 'every day at 03:00',
          action: { copy: { from: w.colon('in/'), to: w.colon(`${unique('n')}/`) } },
        }),
      action: 'schedule.create',
      status: 201,
      target: answer,
    },
    'PATCH /v1/schedules/{id}': {
      sample: async () => json('PATCH', `/v1/schedules/${(await w.schedule()).id}`, { paused: true }),
      action: 'schedule.update',
      status: 200,
      target: urlId,
    },
    'DELETE /v1/schedules/{id}': {
      sample: async () => json('DELETE', `/v1/schedules/${(await w.schedule()).id}`),
      action: 'schedule.delete',
      status: 204,
      target: urlId,
    },
    'POST /v1/schedules/{id}/run': {
      sample: async () => json('POST', `/v1/schedules/${(await w.schedule()).id}/run`),
      action: 'schedule.run',
      status: 202,
      target: urlId,
    },
  });

  /** The samples of the reads by POST: each answers 2xx and adds no row. */
  const reads = (w: World): Record<string, () => Promise<InjectOptions>> => ({
    'POST /v1/locations/get': async () => json('POST', '/v1/locations/get', { id: w.loc.id }),
    'POST /v1/locations/status': async () => json('POST', '/v1/locations/status', { id: w.loc.id }),
    'POST /v1/list': async () => json('POST', '/v1/list', { id: w.loc.id, path: w.bucket }),
    'POST /remove/preview': async () => json('POST', '/remove/preview', { path: w.at('in/**') }),
    'POST /move/preview': async () =>
      json('POST', '/move/preview', { from: w.at('in/*.txt'), to: w.at('x/') }),
  });

  test('every change through the API adds exactly one row, a dry run one plan.create; a preview or a failed request none', async () => {
    const w = await world();
    const rows = table(w);
    const doc = (await t.request({ method: 'GET', url: '/openapi.json', token: null })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const changing = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`))
      .filter((op) => !op.startsWith('GET ') && !op.startsWith('HEAD ') && !READS.includes(op));
    assert.deepEqual(
      changing.filter((op) => rows[op] === undefined),
      [],
      'operations of /openapi.json that change something without a row here',
    );
    assert.deepEqual(
      Object.keys(rows).filter((op) => !changing.includes(op)),
      [],
      'rows here for no changing operation of /openapi.json',
    );
    for (const op of changing) {
      const row = rows[op] as Row;
      const options = await row.sample();
      const before = (await w.rows()).length;
      const res = await w.call(options);
      assert.equal(res.statusCode, row.status, `${op}: ${res.body}`);
      const now = await w.rows();
      assert.equal(now.length, before + 1, `${op}: one row`);
      const added = now.sort((a, b) => Number(b.at) - Number(a.at)).find((r) => r.action === row.action);
      assert.ok(added, `${op}: a row of ${row.action}`);
      assert.deepEqual(
        {
          action: added.action,
          target: added.target,
          status: added.status,
          key_id: added.key_id,
          ip: added.ip,
          user_agent: added.user_agent,
        },
        {
          action: row.action,
          target: row.target(options, res),
          status: row.status,
          key_id: w.key.id,
          ip: '127.0.0.1',
          user_agent: USER_AGENT,
        },
        op,
      );
      if (row.read !== undefined) {
        const dry = await row.read();
        const count = (await w.rows()).length;
        const answered = await w.call(dry);
        assert.equal(answered.statusCode, 200, `${op} as a dry run: ${answered.body}`);
        const rows = await w.rows();
        assert.equal(rows.length, count + 1, `${op} as a dry run: one row`);
        const plan = answered.json().plan_id as string;
        const made = rows.find((r) => r.action === 'plan.create' && r.target?.endsWith(`; plan ${plan})`));
        assert.ok(made, `${op} as a dry run: plan.create naming its plan`);
        assert.match(String(made.target), new RegExp(`^${row.action} `), `${op} as a dry run: its kind`);
        assert.deepEqual(
          { status: made.status, key_id: made.key_id, user_agent: made.user_agent },
          { status: 200, key_id: w.key.id, user_agent: USER_AGENT },
          `${op} as a dry run`,
        );
      }
    }
    for (const [op, sample] of Object.entries(reads(w))) {
      const options = await sample();
      const count = (await w.rows()).length;
      const res = await w.call(options);
      assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${op}: ${res.statusCode} ${res.body}`);
      assert.equal((await w.rows()).length, count, `${op}: no row`);
    }
    // Failed requests: not found, refused by the body's rules, in the wrong state.
    const failures: InjectOptions[] = [
      json('DELETE', `/v1/webhooks/${crypto.randomUUID()}`),
      json('DELETE', '/v1/locations', { id: crypto.randomUUID() }),
      json('POST', '/v1/locations', { provider: 's3', label: unique('bad'), secret: {} }),
      json('POST', `/v1/jobs/${crypto.randomUUID()}/cancel`),
      json('POST', `/v1/jobs/${(await w.copy()).job_id}/retry`),
    ];
    for (const options of failures) {
      const count = (await w.rows()).length;
      const res = await w.call(options);
      assert.ok(
        res.statusCode >= 400 && res.statusCode < 500,
        `${options.method} ${options.url}: ${res.body}`,
      );
      assert.equal((await w.rows()).length, count, `${options.method} ${options.url}: no row`);
    }
    // Never a secret, a password or a body.
    const all = JSON.stringify(await db().selectFrom('audit_events').selectAll().execute());
    assert.ok(!all.includes(w.secretKey), "a location's secret in audit_events");
    assert.ok(!all.includes(SHARE_PASSWORD), 'a share password in audit_events');
    assert.ok(!all.includes('uploaded'), 'an upload body in audit_events');
  });

  test('a record that cannot be written takes its change with it: 5xx, neither the change nor a row', async () => {
    const w = await world();
    const victim = await w.post('/v1/tokens', { name: unique('victim') });
    const jobsOf = async () =>
      (await db().selectFrom('jobs').select('id').where('workspace_id', '=', w.workspace.id).execute())
        .length;
    const jobsBefore = await jobsOf();
    const count = (await w.rows()).length;
    if (database.name === 'sqlite') {
      await sql`create trigger audit_forced before insert on audit_events
        begin select raise(abort, 'forced'); end`.execute(db());
    } else {
      await sql`create function audit_forced() returns trigger language plpgsql as $$
        begin raise exception 'forced'; end $$`.execute(db());
      await sql`create trigger audit_forced before insert on audit_events
        for each row execute function audit_forced()`.execute(db());
    }
    try {
      const label = unique('doomed');
      const created = await w.call(
        json('POST', '/v1/locations', {
          provider: 's3',
          label,
          secret: w.secret,
          metadata: { endpoint: s3.endpoint },
        }),
      );
      assert.ok(created.statusCode >= 500, `location.create: ${created.statusCode} ${created.body}`);
      const location = await db()
        .selectFrom('locations')
        .select('id')
        .where('label', '=', label)
        .executeTakeFirst();
      assert.equal(location, undefined, 'the location was not created');

      const revoked = await w.call(json('DELETE', `/v1/tokens/${victim.id}`));
      assert.ok(revoked.statusCode >= 500, `key.revoke: ${revoked.statusCode} ${revoked.body}`);
      const key = await db()
        .selectFrom('api_keys')
        .select('revoked_at')
        .where('id', '=', victim.id)
        .executeTakeFirstOrThrow();
      assert.equal(key.revoked_at, null, 'the key was not revoked');
      // Its token still works.
      const self = await t.request({ method: 'GET', url: '/v1/key', token: victim.token });
      assert.equal(self.statusCode, 200, self.body);

      const copied = await w.call(json('POST', '/v1/copy', { from: w.colon('in/'), to: w.colon('forced/') }));
      assert.ok(copied.statusCode >= 500, `copy: ${copied.statusCode} ${copied.body}`);
      assert.equal(await jobsOf(), jobsBefore, 'no job was created');
      assert.equal((await w.rows()).length, count, 'no row');
    } finally {
      await sql`drop trigger audit_forced${database.name === 'sqlite' ? sql`` : sql` on audit_events`}`.execute(
        db(),
      );
      if (database.name !== 'sqlite') await sql`drop function audit_forced()`.execute(db());
    }
    // Written again once the trigger is gone.
    const res = await w.call(json('DELETE', `/v1/tokens/${victim.id}`));
    assert.equal(res.statusCode, 204, res.body);
    assert.equal((await w.rows()).length, count + 1);
  });
});
