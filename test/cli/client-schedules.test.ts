// `ferry schedules` (docs/cli.md, "schedules") as a real process against a ferry service with a worker,
// on both databases: create with --copy, list, show, pause, resume, run (its job copies for real), rm.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../support/fixtures.js';
import { readS3, seedBucket } from '../support/transfers.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry client', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('schedules create, list, show, pause, resume, run and rm; a run copies for real', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const src = await seedBucket(s.client, { 'p/a.txt': 'scheduled' });
    const dst = await seedBucket(s.client, {});
    const created = json(
      await run(
        'schedules',
        'create',
        'nightly',
        '--every',
        'every day at 02:30',
        '--timezone',
        'Europe/Paris',
        '--copy',
        `${label}:${src}/p/`,
        `${label}:${dst}/q/`,
        '--json',
      ),
    );
    const id = String(created.id);
    assert.equal(created.cron, '30 2 * * *');
    assert.deepEqual(created.action, { copy: { from: `${label}:${src}/p/`, to: `${label}:${dst}/q/` } });

    const listed = ok(await run('schedules')).stdout;
    assert.match(listed, /^SCHEDULE\s+NAME\s+EVERY\s+NEXT RUN\s+ACTION$/m);
    assert.match(listed, new RegExp(`^${id}\\s+nightly\\s+every day at 02:30\\s+\\S.*copy ${label}:`, 'm'));

    const shown = ok(await run('schedules', 'show', id)).stdout;
    assert.match(shown, /^every:\s+every day at 02:30 \(30 2 \* \* \*\)$/m);
    assert.match(shown, /^timezone:\s+Europe\/Paris$/m);

    assert.match(ok(await run('schedules', 'pause', id)).stdout, new RegExp(`schedule ${id} paused`));
    assert.match(
      ok(await run('schedules')).stdout,
      new RegExp(`^${id}\\s+nightly\\s+every day at 02:30\\s+paused`, 'm'),
    );
    assert.match(
      ok(await run('schedules', 'resume', id)).stdout,
      new RegExp(`schedule ${id} resumed; next run`),
    );

    const started = json(await run('schedules', 'run', id, '--json'));
    assert.equal(started.status, 'planning');
    const watched = await run('jobs', 'watch', String(started.job_id), '--interval', '0.1', '--json');
    assert.equal(watched.code, 0, watched.stderr);
    assert.equal(JSON.parse(watched.stdout).schedule_id, id);
    assert.equal((await readS3(s.client, dst, 'q/a.txt'))?.toString(), 'scheduled');
    assert.match(
      ok(await run('schedules', 'show', id)).stdout,
      new RegExp(`^runs:\\nDUE\\s+OUTCOME\\s+JOB\\s+REASON\\n.*\\s+started\\s+${started.job_id}`, 'm'),
    );

    const usage = await run('schedules', 'create', 'x', '--every', 'every day');
    assert.equal(usage.code, 2, usage.stderr);
    assert.match(usage.stderr, /one of --copy FROM TO or --sync FROM TO/);
    const refused = await run(
      'schedules',
      'create',
      'x',
      '--every',
      'every fortnight',
      '--copy',
      `${label}:${src}/p/`,
      `${label}:${dst}/r/`,
    );
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /"fortnight" is not understood/);

    assert.match(ok(await run('schedules', 'rm', id)).stdout, new RegExp(`schedule ${id} deleted`));
    assert.equal((await run('schedules', 'show', id)).code, 3);
  });
});
