// `ferry cp` with a path on this computer (docs/cli.md, "Copying files to and from this computer"), run
// as a real process against a ferry service in this process with s3rver behind it, on both databases:
// a folder goes up and comes back byte for byte, one file both ways, --dry-run changes nothing, the
// progress line on a terminal, and the refusals and errors in words; against a second app on the same
// database whose files rate limit is low and whose clock the test moves, a folder run waits out the 429
// and goes on, and a run that stops ends with its summary and the names of the files it did not move.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { startTestApp } from '../support/app.js';
import { SkippingClock } from '../support/clock.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { readS3, seedBucket } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';
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
    // Each stored with the type its name says, as a browser's upload would.
    const typeOf = async (key: string) =>
      (await s.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentType;
    assert.equal(await typeOf('up/index.html'), 'text/html');
    assert.equal(await typeOf('up/a b/[ab].txt'), 'text/plain');
    assert.equal(await typeOf('up/a b/deep/big.bin'), 'application/octet-stream');

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
      /--manifest, --overwrite, --watch, --backup-to and the filters are for copies between locations/,
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

  test('a folder run waits out a 429 (its Retry-After, said on stderr) and goes on, downloads and uploads; a run that stops ends with its summary and the names of the files it did not move', async () => {
    const { run, env, token } = await s.workspace();
    const label = await s.location(run);
    const site = { 'f/a.txt': 'a', 'f/b.txt': 'bb', 'f/deep/c.txt': 'ccc', 'f/d.pdf': 'dddd' };
    const bucket = await seedBucket(s.client, site);

    // The same database through an app whose files limit is 10 a minute, on a clock that moves only
    // when the test says: the minute's places are taken at T, and at T + 58 s the next file is told to
    // come back in 2 s. The test lets the minute pass once the 429 was answered.
    const clock = new SkippingClock();
    clock.freeze();
    const limited = await startTestApp(database, {
      shareWith: s.t,
      clock,
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_RATE_FILES_PER_MINUTE: '10' },
    });
    try {
      const url = await limited.app.listen({ port: 0, host: '127.0.0.1' });
      const viaLimited = (...args: string[]) => ferry(args, { env: { ...env, FERRY_URL: url } });
      const refusals = () => limited.logs.lines.filter((l) => l.includes('"status":429')).length;
      /** Takes the bucket's free places now, moves the clock 58 s on, and lets the minute pass at the first 429. */
      const fillThenPass = async (places: number) => {
        const at = clock.now();
        for (let i = 0; i < places; i++) {
          const res = await limited.request({
            method: 'HEAD',
            url: `/v1/files/${label}/${bucket}/none`,
            token,
          });
          assert.equal(res.statusCode, 404, 'a place taken');
        }
        clock.skipTo(at + 58_000);
        const before = refusals();
        return async () => {
          await waitUntil(() => refusals() > before, { what: 'a file refused with 429', timeoutMs: 120_000 });
          clock.skipTo(at + 61_000);
        };
      };
      const waited =
        /^ferry: at most 10 file uploads and downloads per minute in a workspace; waiting 2 s, then going on$/m;

      const passDown = await fillThenPass(10);
      const back = join(s.home, unique('back'));
      const downloading = viaLimited('cp', `${label}:${bucket}/f/`, back);
      await passDown();
      const down = ok(await downloading);
      assert.match(down.stderr, waited);
      assert.match(down.stdout, /^downloaded 4 files, 10 B in /m);
      assert.equal(readFileSync(join(back, 'deep', 'c.txt'), 'utf8'), 'ccc');

      // An upload's body is read again from its first byte for the try after the wait.
      const passUp = await fillThenPass(6);
      const uploading = viaLimited('cp', back, `${label}:${bucket}/up/`, '--transfers', '2');
      await passUp();
      const up = ok(await uploading);
      assert.match(up.stderr, waited);
      assert.match(up.stdout, /^uploaded 4 files, 10 B in /m);
      for (const [key, body] of Object.entries(site))
        assert.equal((await readS3(s.client, bucket, key.replace(/^f\//, 'up/')))?.toString(), body, key);
    } finally {
      await limited.close();
    }

    // A stop (the same answer for every file: no such location) still ends with the summary, and every
    // file not moved is named; the exit code is the stop's.
    const folder = join(s.home, unique('stop'));
    mkdirSync(folder);
    for (const name of ['one.txt', 'two.txt', 'three.txt']) writeFileSync(join(folder, name), name);
    const stopped = await run('cp', folder, `nosuch:${bucket}/x/`, '--transfers', '1');
    assert.equal(stopped.code, 3, stopped.stderr);
    assert.match(stopped.stdout, /^uploaded 0 files, 0 B in \S+, 0 B\/s; 3 not uploaded: the run stopped$/m);
    const names = ['one.txt', 'three.txt', 'two.txt'].map((n) => `${folder}/${n}`);
    assert.match(stopped.stderr, /^ferry: no location is named "nosuch"/);
    assert.ok(
      stopped.stderr.endsWith(
        `\nthe run stopped: 3 of 3 files not uploaded:\n${names.map((n) => `  ${n}`).join('\n')}\n`,
      ),
      stopped.stderr,
    );
    const asJson = await run('cp', folder, `nosuch:${bucket}/x/`, '--json');
    assert.equal(asJson.code, 3, asJson.stderr);
    const summary = JSON.parse(asJson.stdout) as { files: number; failures: Array<{ path: string }> };
    assert.equal(summary.files, 0);
    assert.deepEqual(
      summary.failures.map((f) => f.path),
      names,
    );
  });
});
