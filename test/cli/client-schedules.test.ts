// `ferry schedules` (docs/cli.md, "schedules") as a real process against a ferry service with a worker,
// on both databases: create with --copy, list, show, pause, resume, run (its job copies for real), rm;
// create takes every field of POST /v1/schedules and list and show say them back; --delete (here and
// on sync) with a key that lacks "remove" is refused before anything is sent.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { eachDatabase, unique } from '../support/fixtures.js';
import { readS3, seedBucket } from '../support/transfers.js';
import { ferry } from './run.js';
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
    // The next run is said in the schedule's zone, naming it: "every day at 02:30" in Paris is 02:30
    // there, whatever this computer's zone (the tests run in UTC, where it is 01:30 or 00:30).
    assert.match(
      listed,
      new RegExp(
        `^${id}\\s+nightly\\s+every day at 02:30\\s+\\w{3} \\d{4}-\\d\\d-\\d\\d 02:30 \\(Europe/Paris\\)\\s+copy ${label}:`,
        'm',
      ),
    );

    const shown = ok(await run('schedules', 'show', id)).stdout;
    assert.match(shown, /^every:\s+every day at 02:30 \(30 2 \* \* \*\)$/m);
    assert.match(shown, /^timezone:\s+Europe\/Paris$/m);
    assert.match(shown, /^next run:\s+\w{3} \d{4}-\d\d-\d\d 02:30 \(Europe\/Paris\)$/m);

    assert.match(ok(await run('schedules', 'pause', id)).stdout, new RegExp(`schedule ${id} paused`));
    assert.match(
      ok(await run('schedules')).stdout,
      new RegExp(`^${id}\\s+nightly\\s+every day at 02:30\\s+paused`, 'm'),
    );
    assert.match(
      ok(await run('schedules', 'resume', id)).stdout,
      new RegExp(`schedule ${id} resumed; next run \\w{3} \\d{4}-\\d\\d-\\d\\d 02:30 \\(Europe/Paris\\)`),
    );

    const started = json(await run('schedules', 'run', id, '--json'));
    assert.equal(started.status, 'planning');
    const watched = await run('jobs', 'watch', String(started.job_id), '--interval', '0.1', '--json');
    assert.equal(watched.code, 0, watched.stderr);
    assert.equal(JSON.parse(watched.stdout).schedule_id, id);
    assert.equal((await readS3(s.client, dst, 'q/a.txt'))?.toString(), 'scheduled');
    // The run's job has ended: the run is shown as it stands now, not as "started" for ever.
    assert.match(
      ok(await run('schedules', 'show', id)).stdout,
      new RegExp(`^runs:\\nDUE\\s+OUTCOME\\s+JOB\\s+REASON\\n.*\\s+finished\\s+${started.job_id}`, 'm'),
    );

    const usage = await run('schedules', 'create', 'x', '--every', 'every day');
    assert.equal(usage.code, 2, usage.stderr);
    assert.match(usage.stderr, /one of --copy FROM TO, --sync FROM TO or --verify FROM TO/);
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

  test('schedules create takes every field of the API (filter, delete cap, compare, bandwidth, manifest, overwrite) and list and show say them back; --delete needs the "remove" scope', async () => {
    const { run, env } = await s.workspace();
    const label = await s.location(run);
    const src = await seedBucket(s.client, { 'a.txt': 'a' });
    const dst = await seedBucket(s.client, { 'old.txt': 'old' });
    const from = `${label}:${src}/`;
    const to = `${label}:${dst}/`;
    const created = json(
      await run(
        ...['schedules', 'create', 'mirror', '--every', 'every 15 minutes', '--sync', from, to],
        ...['--delete', '--max-delete', '5', '--compare', 'checksum', '--bandwidth', '1M'],
        ...['--include', '*.txt', '--exclude', '*.tmp', '--exclude', '.DS_Store'],
        ...['--min-size', '1', '--max-size', '10K'],
        ...['--modified-after', '2026-01-01T00:00:00Z', '--modified-before', '2027-01-01T00:00:00Z'],
        '--json',
      ),
    );
    assert.deepEqual(created.action, {
      sync: {
        from,
        to,
        compare: 'checksum',
        delete: true,
        max_delete: 5,
        bandwidth_limit: 1024 * 1024,
        filter: {
          include: ['*.txt'],
          exclude: ['*.tmp', '.DS_Store'],
          min_size: 1,
          max_size: 10 * 1024,
          modified_after: '2026-01-01T00:00:00Z',
          modified_before: '2027-01-01T00:00:00Z',
        },
      },
    });
    const id = String(created.id);
    assert.match(
      ok(await run('schedules')).stdout,
      new RegExp(
        `^${id}\\s+mirror\\s+every 15 minutes\\s+.*sync ${from} → ${to} \\(delete ≤ 5; include \\*\\.txt; exclude \\*\\.tmp, \\.DS_Store; at least 1 B; at most 10 KiB; modified after `,
        'm',
      ),
    );
    const shown = ok(await run('schedules', 'show', id)).stdout;
    assert.match(shown, /^compare:\s+checksum$/m);
    assert.match(shown, /^delete:\s+what the source lacks, at most 5$/m);
    assert.match(
      shown,
      /^filter:\s+include \*\.txt; exclude \*\.tmp, \.DS_Store; at least 1 B; at most 10 KiB; modified after \S+ \S+; modified before \S+ \S+$/m,
    );
    assert.match(shown, /^bandwidth:\s+1\.0 MiB\/s$/m);

    const manifest = join(s.home, unique('manifest'));
    writeFileSync(manifest, 'a.txt\n\nb.txt\n');
    const copy = json(
      await run(
        ...['schedules', 'create', 'some', '--every', 'every day', '--copy', from, `${label}:${dst}/c/`],
        ...['--overwrite', 'if-missing', '--manifest', manifest, '--json'],
      ),
    );
    assert.deepEqual(copy.action, {
      copy: { from, to: `${label}:${dst}/c/`, overwrite: 'if-missing', manifest: ['a.txt', 'b.txt'] },
    });
    const copyShown = ok(await run('schedules', 'show', String(copy.id))).stdout;
    assert.match(copyShown, /^manifest:\s+2 keys$/m);
    assert.match(copyShown, /^overwrite:\s+if-missing$/m);

    const wrong = await run(
      'schedules',
      'create',
      'x',
      '--every',
      'every day',
      '--copy',
      from,
      to,
      '--max-delete',
      '3',
    );
    assert.equal(wrong.code, 2, wrong.stderr);
    assert.match(wrong.stderr, /--max-delete goes with --sync/);

    // A key with "transfer" but not "remove": --delete is refused before anything is sent (exit 5, the
    // scope named), on schedules create and on sync; without --delete it syncs.
    const mover = json<{ token: string }>(
      await run('keys', 'create', 'mover', '--scope', 'read,transfer', '--json'),
    );
    const asMover = (...args: string[]) => ferry(args, { env: { ...env, FERRY_API_KEY: mover.token } });
    const lacks =
      /^ferry: --delete \(removing what the source lacks\) needs the "remove" scope, which this API key \("mover"\) lacks: it has read, transfer; leave out --delete, or use a key with "remove" \(ferry keys create NAME --scope read,transfer,remove\); ferry whoami shows what this key may do\n$/;
    const scheduled = await asMover(
      'schedules',
      'create',
      'y',
      '--every',
      'every day',
      '--sync',
      from,
      to,
      '--delete',
    );
    assert.equal(scheduled.code, 5, scheduled.stderr);
    assert.match(scheduled.stderr, lacks);
    const synced = await asMover('sync', from, to, '--delete', '--watch');
    assert.equal(synced.code, 5, synced.stderr);
    assert.match(synced.stderr, lacks);
    assert.equal((await readS3(s.client, dst, 'old.txt'))?.toString(), 'old', 'nothing deleted');
    const names = json<{ schedules: Array<{ name: string }> }>(await run('schedules', '--json')).schedules;
    assert.deepEqual(names.map((n) => n.name).sort(), ['mirror', 'some'], 'no schedule was made');
    ok(await asMover('sync', from, to, '--watch'));
    assert.equal((await readS3(s.client, dst, 'a.txt'))?.toString(), 'a');
  });
});
