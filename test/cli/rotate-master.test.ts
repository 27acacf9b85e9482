// `ferry keys rotate-master` as an operator runs it (docs/security.md, "Rotating the master key"): the
// built program beside a database whose secrets a service sealed under key A, on both databases. With
// FERRY_MASTER_KEY=B and FERRY_MASTER_KEY_PREVIOUS=A it re-wraps every record, reports its progress and
// says that the previous key may go; settings that cannot open a record, or no key at all, are exit 2
// with a message that names key ids and never a key. SIGTERM (like Ctrl-C) stops a run after the batch
// in hand, and the next run re-wraps only what is left.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Keyring, masterKeyFrom } from '../../src/crypto/envelope.js';
import { newId } from '../../src/ids.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, secretFor, unique } from '../support/fixtures.js';
import { killAll, startFerry } from '../support/processes.js';
import { createLocation } from '../support/transfers.js';
import { ferry } from './run.js';

const newKey = () => randomBytes(32).toString('base64');
const idOf = (key: string) => masterKeyFrom(Buffer.from(key, 'base64')).id;

after(killAll);

await eachDatabase('ferry keys rotate-master', (database) => {
  const [a, b, c] = [newKey(), newKey(), newKey()];
  let t: TestApp;
  let env: Record<string, string>;
  before(async () => {
    t = await startTestApp(database, { env: { FERRY_MASTER_KEY: a, FERRY_EGRESS_ALLOW: '127.0.0.1/32' } });
    for (let i = 0; i < 3; i++) await createLocation(t.request, { provider: 's3', secret: secretFor('s3') });
    const hook = await t.request({
      method: 'POST',
      url: '/v1/webhooks',
      payload: { url: 'http://127.0.0.1:9/hook', events: ['job.complete'] },
    });
    assert.equal(hook.statusCode, 201, hook.body);
    env = {
      FERRY_DATA_DIR: t.config.dataDir,
      ...(t.config.databaseUrl ? { FERRY_DATABASE_URL: t.config.databaseUrl.reveal() } : {}),
    };
  });
  after(() => t.close());

  const noKeyIn = (text: string) => {
    for (const key of [a, b, c]) assert.ok(!text.includes(key), 'no master key is printed');
  };

  test('a key the settings lack is exit 2 naming its id, and nothing changes', async () => {
    const run = await ferry(['keys', 'rotate-master'], { env: { ...env, FERRY_MASTER_KEY: b } });
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(`3 locations under master key ${idOf(a)}, 1 webhooks under master key ${idOf(a)}`),
    );
    assert.match(run.stderr, /add it to FERRY_MASTER_KEY_PREVIOUS \(nothing was changed\)/);
    noKeyIn(run.stdout + run.stderr);
  });

  test('with B and A it re-wraps every record in batches, reports progress, and says A may go', async () => {
    const run = await ferry(['keys', 'rotate-master', '--batch-size', '2'], {
      env: { ...env, FERRY_MASTER_KEY: b, FERRY_MASTER_KEY_PREVIOUS: a },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.stderr.trim().split('\n'), [
      `locations: 2 of 3 re-wrapped under ${idOf(b)}`,
      `locations: 3 of 3 re-wrapped under ${idOf(b)}`,
      `webhooks: 1 of 1 re-wrapped under ${idOf(b)}`,
    ]);
    assert.deepEqual(run.stdout.trim().split('\n'), [
      `4 re-wrapped under master key ${idOf(b)}, 0 changed by the service meanwhile (kept as it wrote them); 0 remain under earlier keys`,
      'every secret is under the current key: remove FERRY_MASTER_KEY_PREVIOUS from the settings of every process and restart them',
    ]);
    noKeyIn(run.stdout + run.stderr);
    const rows = await t.services.db.kysely.selectFrom('locations').select('secret_envelope').execute();
    assert.deepEqual([...new Set(rows.map((r) => r.secret_envelope.split('.')[1]))], [idOf(b)]);
  });

  test('run again with B alone it has nothing to do; --json says so', async () => {
    const run = await ferry(['keys', 'rotate-master', '--json'], { env: { ...env, FERRY_MASTER_KEY: b } });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), {
      current_key: idOf(b),
      before: [
        { table: 'locations', key: idOf(b), records: 3 },
        { table: 'webhooks', key: idOf(b), records: 1 },
      ],
      resealed: 0,
      changed: 0,
      remaining: [],
      interrupted: false,
    });
  });

  test('without FERRY_MASTER_KEY and without master.key it refuses to make a key (exit 2)', async () => {
    const run = await ferry(['keys', 'rotate-master'], { env });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /FERRY_MASTER_KEY is unset and .*master\.key does not exist/);
    assert.equal(existsSync(join(t.config.dataDir, 'master.key')), false);
  });

  test('a bad --batch-size is a usage error', async () => {
    const run = await ferry(['keys', 'rotate-master', '--batch-size', '0'], {
      env: { ...env, FERRY_MASTER_KEY: c },
    });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--batch-size must be a whole number from 1 to 10000, got 0/);
  });
});

await eachDatabase('ferry keys rotate-master stopped and run again', (database) => {
  const [a, b] = [newKey(), newKey()];
  const TOTAL = 2000;
  let t: TestApp;
  let env: Record<string, string>;
  before(async () => {
    t = await startTestApp(database, { env: { FERRY_MASTER_KEY: a } });
    await createLocation(t.request, { provider: 's3', secret: secretFor('s3') });
    // Copies of that row, each sealed under A for its own id: many batches of one, quickly made.
    const db = t.services.db.kysely;
    const row = await db.selectFrom('locations').selectAll().executeTakeFirstOrThrow();
    const sealA = new Keyring([masterKeyFrom(Buffer.from(a, 'base64'))]);
    for (let i = 1; i < TOTAL; i += 200) {
      const copies = Array.from({ length: Math.min(200, TOTAL - i) }, () => {
        const id = newId();
        return { ...row, id, label: unique('copy'), secret_envelope: sealA.seal('{}', id) };
      });
      await db.insertInto('locations').values(copies).execute();
    }
    env = {
      FERRY_DATA_DIR: t.config.dataDir,
      ...(t.config.databaseUrl ? { FERRY_DATABASE_URL: t.config.databaseUrl.reveal() } : {}),
      FERRY_MASTER_KEY: b,
      FERRY_MASTER_KEY_PREVIOUS: a,
    };
  });
  after(() => t.close());

  test('SIGTERM stops it after the batch in hand (exit 1, interrupted); run again it re-wraps only what was left', async () => {
    const first = startFerry('rotate-master', ['keys', 'rotate-master', '--batch-size', '1'], env);
    await first.waitForLine(/^locations: 1 of 2000 re-wrapped/);
    const exit = await first.stop();
    assert.equal(exit.code, 1, first.log());
    const done = Number(
      /^(\d+) re-wrapped under master key/.exec(
        first.lines.find((l) => /re-wrapped under master key/.test(l)) ?? '',
      )?.[1],
    );
    assert.ok(done >= 1 && done < TOTAL, first.log());
    assert.ok(
      first.lines.includes(
        `ferry: interrupted: ${TOTAL - done} records are still under earlier keys (${TOTAL - done} locations under ${idOf(a)}); run ferry keys rotate-master again to continue`,
      ),
      first.log(),
    );

    const second = await ferry(['keys', 'rotate-master', '--batch-size', '500'], { env });
    assert.equal(second.code, 0, second.stderr);
    assert.match(
      second.stdout,
      new RegExp(
        `^${TOTAL - done} re-wrapped under master key ${idOf(b)}, 0 changed by the service meanwhile \\(kept as it wrote them\\); 0 remain under earlier keys$`,
        'm',
      ),
    );
  });
});
