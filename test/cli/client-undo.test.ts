// `--backup-to` on rm, mv, sync and bulk cp, and `ferry jobs undo ID` (docs/cli.md; docs/api.md, "Undo")
// as a real process against a ferry service in this process, on both databases: what the work removes or
// overwrites is kept under the backup prefix and the job's id, and the undo puts it back; an undo of a
// job without a backup that deleted is refused (exit 4) naming what cannot come back.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../support/fixtures.js';
import { readS3, seedBucket } from '../support/transfers.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry --backup-to and jobs undo', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  const text = async (bucket: string, key: string) => (await readS3(s.client, bucket, key))?.toString();

  test('rm and sync with --backup-to keep what they remove or overwrite; jobs undo puts it back', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const bucket = await seedBucket(s.client, { 'tmp/a.txt': 'A', 'tmp/b.txt': 'B' });
    const backups = await seedBucket(s.client, {});

    const removed = json(
      await run(
        'rm',
        `${label}:${bucket}/tmp/*.txt`,
        '--yes',
        '--backup-to',
        `${label}:${backups}/rm/`,
        '--watch',
        '--json',
      ),
    );
    assert.equal(removed.status, 'complete', JSON.stringify(removed));
    assert.equal(await readS3(s.client, bucket, 'tmp/a.txt'), undefined);
    assert.equal(await text(backups, `rm/${removed.id}/a.txt`), 'A');
    const undone = json(await run('jobs', 'undo', String(removed.id), '--watch', '--json'));
    assert.equal(undone.status, 'complete', JSON.stringify(undone));
    assert.equal(undone.kind, 'undo');
    assert.equal(await text(bucket, 'tmp/a.txt'), 'A');
    assert.equal(await text(bucket, 'tmp/b.txt'), 'B');

    const src = await seedBucket(s.client, { 'a.txt': 'new A', 'c.txt': 'C' });
    const dst = await seedBucket(s.client, {
      'a.txt': 'old',
      'gone.txt': 'G',
      'keep.txt': 'K',
      'x.txt': 'X',
    });
    const synced = json(
      await run(
        'sync',
        `${label}:${src}/`,
        `${label}:${dst}/`,
        '--delete',
        '--max-delete',
        '3',
        '--backup-to',
        `${label}:${backups}/sync/`,
        '--watch',
        '--json',
      ),
    );
    assert.equal(synced.status, 'complete', JSON.stringify(synced));
    assert.equal(await text(backups, `sync/${synced.job_id}/a.txt`), 'old');
    assert.equal(await text(backups, `sync/${synced.job_id}/gone.txt`), 'G');
    const shown = ok(await run('jobs', 'show', String(synced.job_id)));
    assert.match(shown.stdout, new RegExp(`backup to:\\s+${label}:${backups}/sync/`));
    const plain = ok(await run('jobs', 'undo', String(synced.job_id)));
    const undoId = /undo job ([0-9a-f-]{36}) planning/.exec(plain.stdout)?.[1];
    assert.ok(undoId, plain.stdout);
    const watched = await run('jobs', 'watch', undoId);
    assert.equal(watched.code, 0, watched.stderr);
    assert.equal(await text(dst, 'a.txt'), 'old');
    assert.equal(await text(dst, 'gone.txt'), 'G');
    assert.equal(await readS3(s.client, dst, 'c.txt'), undefined, 'created by the sync: removed');
  });

  test('mv and a bulk cp with --backup-to keep what they overwrite; an undo without a backup is refused naming the objects', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const backups = await seedBucket(s.client, {});
    const from = await seedBucket(s.client, { 'in/m.txt': 'moved', 'p/a.txt': 'copied' });
    const to = await seedBucket(s.client, { 'out/m.txt': 'was here', 'q/a.txt': 'was here too' });

    const moved = json(
      await run(
        'mv',
        `${label}:${from}/in/m.txt`,
        `${label}:${to}/out/`,
        '--yes',
        '--backup-to',
        `${label}:${backups}/mv`,
        '--watch',
        '--json',
      ),
    );
    assert.equal(moved.status, 'complete', JSON.stringify(moved));
    assert.equal(await text(to, 'out/m.txt'), 'moved');
    assert.equal(await text(backups, `mv/${moved.id}/m.txt`), 'was here');

    const copied = json(
      await run(
        'cp',
        `${label}:${from}/p/`,
        `${label}:${to}/q/`,
        '--backup-to',
        `${label}:${backups}/cp/`,
        '--watch',
        '--json',
      ),
    );
    assert.equal(copied.status, 'complete', JSON.stringify(copied));
    assert.equal(await text(backups, `cp/${copied.job_id}/a.txt`), 'was here too');

    const dst = await seedBucket(s.client, { 'old.txt': 'O' });
    const src = await seedBucket(s.client, { 'new.txt': 'N' });
    const deleting = json(
      await run(
        'sync',
        `${label}:${src}/`,
        `${label}:${dst}/`,
        '--delete',
        '--max-delete',
        '1',
        '--watch',
        '--json',
      ),
    );
    assert.equal(deleting.status, 'complete', JSON.stringify(deleting));
    const refused = await run('jobs', 'undo', String(deleting.job_id));
    assert.equal(refused.code, 4, refused.stderr);
    assert.match(refused.stderr, /old\.txt \(deleted without a backup\)/);
    assert.equal(await readS3(s.client, dst, 'old.txt'), undefined, 'nothing was put back');

    const local = await run('cp', './nowhere', `${label}:${to}/x/`, '--backup-to', `${label}:${backups}/l/`);
    assert.equal(local.code, 2, local.stderr);
    assert.match(local.stderr, /--backup-to/);
  });
});
