// `ferry cp` with a path on this computer (docs/cli.md, "Copying files to and from this computer"), run
// as a real process against a ferry service in this process with s3rver behind it, on both databases:
// a folder goes up and comes back byte for byte, one file both ways, --dry-run changes nothing, the
// progress line on a terminal, and the refusals and errors in words.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { eachDatabase, unique } from '../support/fixtures.js';
import { readS3, seedBucket } from '../support/transfers.js';
import { makeSite, tree } from './local-files.js';
import { ferry } from './run.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry client, local paths', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('cp uploads a folder and downloads it back byte for byte; one file both ways; --dry-run changes nothing; a terminal shows progress', async () => {
    const { run, env } = await s.workspace();
    const label = await s.location(run);
    const bucket = await seedBucket(s.client, { 'other/keep.txt': 'kept' });
    const { dir, files } = makeSite(s.home);

    const dry = ok(await run('cp', dir, `${label}:${bucket}/up/`, '--dry-run'));
    assert.match(dry.stdout, /^\s+SIZE\s+FROM\s+TO$/m);
    assert.match(dry.stdout, /^\s*3\.0 MiB\s+\S+\/a b\/deep\/big\.bin\s+\S+:\S+\/up\/a b\/deep\/big\.bin$/m);
    assert.match(dry.stdout, /^would upload 4 files, 3\.0 MiB$/m);
    assert.equal(await readS3(s.client, bucket, 'up/index.html'), undefined, 'a dry run stores nothing');

    const up = ok(await run('cp', dir, `${label}:${bucket}/up/`, '--transfers', '2'));
    assert.match(up.stdout, /^uploaded 4 files, 3\.0 MiB in \d+:\d\d, \S+ \S+\/s$/m);
    assert.equal(up.stderr, '', 'no progress line without a terminal');
    for (const [rel, bytes] of files)
      assert.deepEqual(await readS3(s.client, bucket, `up/${rel}`), bytes, rel);

    const back = join(s.home, unique('back'));
    const down = json<{ action: string; files: number; bytes: number; failures: unknown[] }>(
      await run('cp', `${label}:${bucket}/up/`, back, '--json'),
    );
    assert.deepEqual(
      { action: down.action, files: down.files, bytes: down.bytes, failures: down.failures },
      { action: 'download', files: 4, bytes: 3 * 1024 * 1024 + 13 + 13, failures: [] },
    );
    assert.deepEqual(tree(back), files, 'the same names and bytes, and no .ferry-partial left');

    // One file each way: into a prefix keeping its name, and into a folder keeping its name.
    const one = join(s.home, unique('one'));
    writeFileSync(one, 'single file');
    ok(await run('cp', one, `${label}:${bucket}/single/`));
    const name = one.slice(s.home.length + 1);
    assert.equal((await readS3(s.client, bucket, `single/${name}`))?.toString(), 'single file');
    const into = join(s.home, unique('into'));
    mkdirSync(into);
    const got = ok(await run('cp', `${label}:${bucket}/single/${name}`, `${into}/`));
    assert.match(got.stdout, /^downloaded 1 file, 11 B in /);
    assert.equal(readFileSync(join(into, name), 'utf8'), 'single file');

    // On a terminal: the line redrawn in place, then the summary.
    const drawn = await ferry(['cp', `${label}:${bucket}/up/`, join(s.home, unique('tty'))], {
      env,
      tty: true,
    });
    assert.equal(drawn.code, 0, drawn.stdout);
    const redraw = '\r\u001b[K';
    assert.ok(drawn.stdout.includes(`${redraw}100%  3.0 MiB of 3.0 MiB  `), drawn.stdout);
    assert.match(drawn.stdout, /100% {2}3\.0 MiB of 3\.0 MiB {2}\S+ \S+\/s {2}ETA 0:00 {2}4\/4 files {2}/);
    assert.match(drawn.stdout, /\ndownloaded 4 files, 3\.0 MiB in /);
    const quiet = await ferry(['cp', `${label}:${bucket}/up/`, join(s.home, unique('q')), '-q'], {
      env,
      tty: true,
    });
    assert.equal(quiet.code, 0, quiet.stdout);
    assert.equal(quiet.stdout, '', '--quiet: no progress and no summary');
  });

  test('refusals and errors in words: two local paths, a missing file, no such location, a folder where a file is needed, a file where a folder is needed', async () => {
    const { run, env } = await s.workspace();
    const label = await s.location(run);
    const bucket = await seedBucket(s.client, { 'dir/a.txt': 'a' });

    const both = await run('cp', './a.txt', '/tmp/b.txt');
    assert.equal(both.code, 2);
    assert.match(both.stderr, /^ferry: "\.\/a\.txt" and "\/tmp\/b\.txt" are both paths on this computer; /);

    const missing = await run('cp', './no-such-file.txt', `${label}:${bucket}/`);
    assert.equal(missing.code, 3);
    assert.equal(missing.stderr, 'ferry: no file or folder ./no-such-file.txt on this computer\n');

    const file = join(s.home, unique('f'));
    writeFileSync(file, 'x');
    const nowhere = await run('cp', file, `nosuch:${bucket}/`);
    assert.equal(nowhere.code, 3);
    assert.match(nowhere.stderr, /^ferry: no location is named "nosuch"/);

    const folder = await run('cp', `${label}:${bucket}/dir`, join(s.home, unique('d')));
    assert.equal(folder.code, 2);
    assert.equal(
      folder.stderr,
      `ferry: ${label}:${bucket}/dir is a folder, where a file is needed; write ${label}:${bucket}/dir/ to download everything under it\n`,
    );

    const onto = await run('cp', `${label}:${bucket}/dir/`, file);
    assert.equal(onto.code, 2);
    assert.match(onto.stderr, /is a file, where a folder is needed/);

    const gone = await run('cp', `${label}:${bucket}/dir/nope.txt`, join(s.home, unique('n')));
    assert.equal(gone.code, 3, gone.stderr);

    const options = await run('cp', file, `${label}:${bucket}/`, '--watch');
    assert.equal(options.code, 2);
    assert.match(
      options.stderr,
      /--manifest, --overwrite, --watch and the filters are for copies between locations/,
    );
    const filtered = await run('cp', file, `${label}:${bucket}/`, '--exclude', '*.tmp');
    assert.equal(filtered.code, 2);
    assert.match(filtered.stderr, /the filters are for copies between locations/);
    const remoteOnly = await run(
      'cp',
      `${label}:${bucket}/dir/a.txt`,
      `${label}:${bucket}/b.txt`,
      '--transfers',
      '2',
    );
    assert.equal(remoteOnly.code, 2);
    assert.match(remoteOnly.stderr, /--transfers works only when one side is a path on this computer/);

    // A bare name is a location, as always; when a file here has that name the error says how to write it.
    const bareName = `${unique('report')}.txt`;
    writeFileSync(join(s.home, bareName), 'r');
    const bare = await ferry(['cp', bareName, `${label}:${bucket}/x`], { env, cwd: s.home });
    assert.equal(bare.code, 3);
    assert.equal(
      bare.stderr,
      `ferry: no location is named "${bareName}"; "${bareName}" is read as a location; for the file or folder on this computer write ./${bareName}\n`,
    );
    // Into a folder (a destination ending in /) the server refuses the place before it looks the
    // location up; the same advice follows its words.
    const intoFolder = await ferry(['cp', bareName, `${label}:${bucket}/`], { env, cwd: s.home });
    assert.equal(intoFolder.code, 2);
    assert.match(
      intoFolder.stderr,
      new RegExp(
        `is read as a location; for the file or folder on this computer write \\./${bareName.replace('.', '\\.')}\n$`,
      ),
    );
  });
});
