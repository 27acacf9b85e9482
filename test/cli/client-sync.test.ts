// `ferry sync` and `ferry plans` (docs/cli.md, "sync" and "plans") as a real process against a ferry
// service in this process, on both databases: a dry run prints the plan and changes nothing, `plans run`
// does exactly it, a sync with --delete and filters mirrors a prefix, and `cp --dry-run` of a prefix is a
// plan too.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { eachDatabase } from '../support/fixtures.js';
import { readS3, seedBucket } from '../support/transfers.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry sync', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('sync --dry-run prints the plan; plans show and run; sync --delete with filters mirrors; cp --dry-run plans a prefix copy', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const src = await seedBucket(s.client, { 'a.txt': 'a', 'b.txt': 'bb', 'logs/x.log': 'x' });
    const dst = await seedBucket(s.client, { 'gone.txt': 'old' });
    const from = `${label}:${src}/`;
    const to = `${label}:${dst}/`;

    // The one object at the destination goes: all of it, past the default cap (half), so --max-delete.
    const dry = await run(
      'sync',
      from,
      to,
      '--delete',
      '--max-delete',
      '1',
      '--exclude',
      'logs/**',
      '--dry-run',
    );
    ok(dry);
    assert.match(dry.stdout, /^copy\s+1 B\s+a\.txt\s*$/m);
    assert.match(dry.stdout, /^copy\s+2 B\s+b\.txt\s*$/m);
    assert.match(dry.stdout, /^delete\s+3 B\s+gone\.txt\s*$/m);
    assert.doesNotMatch(dry.stdout, /x\.log/, 'the excluded folder is not in the plan');
    const id = /plan ([0-9a-f-]{36}): 2 copy, 1 delete/.exec(dry.stdout)?.[1];
    assert.ok(id, dry.stdout);
    assert.match(dry.stdout, new RegExp(`ferry plans run ${id} does exactly this`));
    assert.equal(await readS3(s.client, dst, 'a.txt'), undefined, 'a dry run copies nothing');

    const shown = json(await run('plans', 'show', id, '--all', '--json'));
    assert.deepEqual(shown.counts, { copy: 2, delete: 1 });
    assert.equal((shown.entries as unknown[]).length, 3);

    // Changed after the plan: left alone by its run.
    await s.client.send(new PutObjectCommand({ Bucket: src, Key: 'b.txt', Body: 'changed' }));
    const ran = await run('plans', 'run', id, '--watch');
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(String(await readS3(s.client, dst, 'a.txt')), 'a');
    assert.equal(await readS3(s.client, dst, 'b.txt'), undefined, 'changed since the plan: not copied');
    assert.equal(await readS3(s.client, dst, 'gone.txt'), undefined);
    const again = await run('plans', 'run', id);
    assert.equal(again.code, 4, 'a plan runs once: a conflict');

    const mirrored = json(
      await run('sync', from, to, '--delete', '--exclude', 'logs/**', '--watch', '--json'),
    );
    assert.equal(mirrored.status, 'complete');
    assert.equal(mirrored.kind, 'sync');
    assert.equal(String(await readS3(s.client, dst, 'b.txt')), 'changed');
    assert.equal(await readS3(s.client, dst, 'logs/x.log'), undefined, 'excluded: not copied');

    const bad = await run('sync', from, to, '--max-delete', '3');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--max-delete bounds --delete/);
    const size = await run('sync', from, to, '--min-size', 'ten');
    assert.equal(size.code, 2);
    assert.match(size.stderr, /--min-size "ten" is not a size/);

    const copyPlan = await run('cp', from, `${label}:${dst}/copy/`, '--include', '*.txt', '--dry-run');
    ok(copyPlan);
    assert.match(copyPlan.stdout, /plan [0-9a-f-]{36}: 2 copy/);
    assert.equal(await readS3(s.client, dst, 'copy/a.txt'), undefined);
  });
});
