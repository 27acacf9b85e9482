// `ferry mv` with a path on this computer (docs/cli.md, "Copying files to and from this computer"), run
// as a real process against a ferry service in this process with s3rver behind it, on both databases:
// each source goes only after its copy succeeded, --dry-run says what would go and changes nothing.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { eachDatabase, unique } from '../support/fixtures.js';
import { readS3 } from '../support/transfers.js';
import { makeSite, tree } from './local-files.js';
import { ok, type Service, startService } from './service.js';

await eachDatabase('ferry client, mv with local paths', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('mv uploads a folder and removes it here; mv back downloads it and removes it from the location; --dry-run moves nothing', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const bucket = unique('b').toLowerCase();
    ok(await run('mb', `${label}/${bucket}`));
    const { dir, files } = makeSite(s.home);

    const dry = ok(await run('mv', dir, `${label}:${bucket}/moved/`, '--dry-run'));
    assert.match(dry.stdout, /^would upload 4 files, 3\.0 MiB, then remove them from this computer$/m);
    assert.deepEqual(tree(dir), files, 'a dry run leaves the folder');
    assert.equal(await readS3(s.client, bucket, 'moved/index.html'), undefined);

    const up = ok(await run('mv', dir, `${label}:${bucket}/moved/`));
    assert.match(up.stdout, /^uploaded 4 files, 3\.0 MiB in .*; 4 removed from this computer$/m);
    assert.equal(existsSync(dir), false, 'the emptied folders go too');
    for (const [rel, bytes] of files)
      assert.deepEqual(await readS3(s.client, bucket, `moved/${rel}`), bytes, rel);

    const back = join(s.home, unique('back'));
    const dryBack = ok(await run('mv', `${label}:${bucket}/moved/`, back, '-n'));
    assert.match(dryBack.stdout, /^would download 4 files, 3\.0 MiB, then remove them from the location$/m);
    assert.equal(existsSync(back), false);

    const down = ok(await run('mv', `${label}:${bucket}/moved/`, back));
    assert.match(down.stdout, /^downloaded 4 files, 3\.0 MiB in .*; 4 removed from the location$/m);
    assert.deepEqual(tree(back), files);
    for (const rel of files.keys())
      assert.equal(await readS3(s.client, bucket, `moved/${rel}`), undefined, `${rel} removed`);

    // One file each way; `[ab].txt` is that one file when removed, never a pattern.
    const one = join(back, 'a b', '[ab].txt');
    ok(await run('mv', one, `${label}:${bucket}/one/`));
    assert.equal(existsSync(one), false);
    assert.equal((await readS3(s.client, bucket, 'one/[ab].txt'))?.toString(), 'just this one');
    ok(await run('mv', `${label}:${bucket}/one/[ab].txt`, one));
    assert.equal(await readS3(s.client, bucket, 'one/[ab].txt'), undefined);
    assert.equal(readFileSync(one, 'utf8'), 'just this one');
  });
});
