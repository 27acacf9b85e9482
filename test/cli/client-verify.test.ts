// `ferry verify` (docs/cli.md, "verify") as a real process against a ferry service in this process, on
// both databases: two prefixes that hold the same objects exit 0 with the counts; differences (one object
// changed at the same size, one on each side only) are listed and exit 7; --mode size, a filter and
// --no-watch; --json prints the job.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../support/fixtures.js';
import { seedBucket } from '../support/transfers.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry verify', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('verify follows the job and prints what it found; exit 0 when equal, 7 with the differences listed', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const src = await seedBucket(s.client, {
      'a.txt': 'same',
      'b.txt': 'abcd',
      'only-src.txt': 'x',
      'c.log': 'l',
    });
    const dst = await seedBucket(s.client, {
      'a.txt': 'same',
      'b.txt': 'abcD',
      'only-dst.txt': 'y',
      'c.log': 'L',
    });
    const from = `${label}:${src}/`;
    const to = `${label}:${dst}/`;

    const found = await run('verify', from, to);
    assert.equal(found.code, 7, found.stderr);
    assert.match(found.stdout, /^kind:\s+verify \(checksum\)$/m);
    assert.match(found.stdout, /^status:\s+complete$/m);
    assert.match(
      found.stdout,
      /^found:\s+1 equal, 2 differ, 1 missing in destination, 1 missing in source$/m,
    );
    assert.match(found.stdout, /^differ\s+b\.txt\s+the md5 differs \(listed\)$/m);
    assert.match(found.stdout, /^missing in destination\s+only-src\.txt\s+not at the destination$/m);
    assert.match(found.stdout, /^missing in source\s+only-dst\.txt\s+not at the source$/m);
    assert.match(found.stderr, /ferry: 4 objects not the same on both sides/);
    assert.match(found.stderr, /complete: 5\/5 objects/, 'the progress, on stderr');

    // Sizes only, without what only one side holds: the same.
    const same = await run('verify', from, to, '--mode', 'size', '--exclude', 'only-*');
    ok(same);
    assert.match(same.stdout, /^found:\s+3 equal, 0 differ, 0 missing in destination, 0 missing in source$/m);

    const detached = await run('verify', from, to, '--no-watch');
    ok(detached);
    const id = /verify job ([0-9a-f-]{36}) planning/.exec(detached.stdout)?.[1];
    assert.ok(id, detached.stdout);
    assert.match(detached.stdout, new RegExp(`ferry jobs watch ${id} follows it`));

    const asJson = await run('verify', from, to, '--mode', 'download', '--exclude', '*.log', '--json');
    assert.equal(asJson.code, 7, asJson.stderr);
    const job = JSON.parse(asJson.stdout) as { kind: string; mode: string; counts: Record<string, number> };
    assert.equal(job.kind, 'verify');
    assert.equal(job.mode, 'download');
    assert.equal(job.counts.equal, 1);
    assert.equal(job.counts.differ, 1);

    const shown = await run('jobs', 'show', id);
    ok(shown);
    assert.match(shown.stdout, /^found:\s+1 equal, 2 differ/m);
    assert.doesNotMatch(shown.stdout, /overwrite/, 'a verify writes nothing: no overwrite line');

    const bad = await run('verify', from, to, '--mode', 'crc');
    assert.equal(bad.code, 2);
    assert.ok(json(await run('jobs', '--json')));
  });

  test('schedules create --verify: its action and mode said back, a run a verify job; --mode only with --verify', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const src = await seedBucket(s.client, { 'p/a.txt': 'same', 'p/b.txt': 'abcd' });
    const dst = await seedBucket(s.client, { 'q/a.txt': 'same', 'q/b.txt': 'abcD' });
    const from = `${label}:${src}/p/`;
    const to = `${label}:${dst}/q/`;
    const created = json(
      await run(
        'schedules',
        'create',
        'proof',
        '--every',
        'every sunday at 04:00',
        '--verify',
        from,
        to,
        '--mode',
        'size',
        '--json',
      ),
    );
    assert.deepEqual(created.action, { verify: { from, to, mode: 'size' } });
    const id = String(created.id);
    const shown = ok(await run('schedules', 'show', id)).stdout;
    assert.match(shown, new RegExp(`^action:\\s+verify ${from} → ${to}$`, 'm'));
    assert.match(shown, /^mode:\s+size$/m);
    const started = json(await run('schedules', 'run', id, '--json'));
    const watched = await run('jobs', 'watch', String(started.job_id), '--interval', '0.1', '--json');
    assert.equal(watched.code, 0, watched.stderr);
    const job = JSON.parse(watched.stdout) as {
      kind: string;
      schedule_id: string;
      counts: Record<string, number>;
    };
    assert.equal(job.kind, 'verify');
    assert.equal(job.schedule_id, id);
    assert.equal(job.counts.equal, 2, 'by size, b.txt is the same');

    const wrong = await run(
      'schedules',
      'create',
      'x',
      '--every',
      'every day',
      '--copy',
      from,
      to,
      '--mode',
      'size',
    );
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /--mode goes with --verify/);
    const capped = await run(
      'schedules',
      'create',
      'x',
      '--every',
      'every day',
      '--verify',
      from,
      to,
      '--bandwidth',
      '1M',
    );
    assert.equal(capped.code, 2);
    assert.match(capped.stderr, /--bandwidth goes with --copy or --sync/);
    const two = await run(
      'schedules',
      'create',
      'x',
      '--every',
      'every day',
      '--verify',
      from,
      to,
      '--sync',
      from,
      to,
    );
    assert.equal(two.code, 2);
    assert.match(two.stderr, /give one of --copy FROM TO, --sync FROM TO or --verify FROM TO/);
  });
});
