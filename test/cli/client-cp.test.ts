// `ferry` as an API client (docs/cli.md), run as a real process against a ferry service in this
// process, on both databases (one test a file, to stay well inside the per-file time limit
// on a loaded machine): cp copies one object and a prefix with a manifest.
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

  test('cp copies one object and a prefix with a manifest; jobs watch follows the job to complete and exits 0; jobs and transfers list them', async () => {
    const { run, env } = await s.workspace();
    const label = await s.location(run);
    const src = await seedBucket(s.client, {
      'one.txt': 'one',
      'p/a.txt': 'a',
      'p/b.txt': 'b',
      'p/c.txt': 'c',
    });
    const dst = await seedBucket(s.client, {});
    const single = json(await run('cp', `${label}:${src}/one.txt`, `${label}:${dst}/one.txt`, '--json'));
    assert.deepEqual(Object.keys(single).sort(), ['id', 'status']);
    const watched = json(await run('transfers', 'watch', String(single.id), '--interval', '0.1', '--json'));
    assert.equal(watched.status, 'complete');
    assert.equal((await readS3(s.client, dst, 'one.txt'))?.toString(), 'one');

    const manifest = join(s.home, unique('manifest'));
    writeFileSync(manifest, 'a.txt\n\nc.txt\n');
    const job = json(
      await run(
        'cp',
        `${label}:${src}/p/`,
        `${label}:${dst}/q/`,
        '--manifest',
        manifest,
        '--overwrite',
        'if-missing',
        '--json',
      ),
    );
    assert.deepEqual(Object.keys(job).sort(), ['job_id', 'status']);
    const followed = await run('jobs', 'watch', String(job.job_id), '--interval', '0.1');
    ok(followed);
    assert.match(followed.stdout, /^status:\s+complete$/m);
    assert.match(followed.stdout, /^objects:\s+2 total, 2 copied, 0 skipped, 0 failed, 0 pending$/m);
    assert.match(
      followed.stderr,
      /^complete: 2\/2 objects, 2 B$/m,
      'plain progress lines without a terminal',
    );
    // On a terminal the same watch draws the bar (stderr and stdout share the terminal here).
    const drawn = await ferry(['jobs', 'watch', String(job.job_id)], { env, tty: true });
    assert.equal(drawn.code, 0, drawn.stdout);
    const bar = `\r\u001b[K[${'#'.repeat(24)}] 100%  complete: 2/2 objects, 2 B  0 B/s  ETA 0:00`;
    assert.ok(drawn.stdout.includes(bar), drawn.stdout);
    assert.equal((await readS3(s.client, dst, 'q/a.txt'))?.toString(), 'a');
    assert.equal(await readS3(s.client, dst, 'q/b.txt'), undefined, 'not in the manifest');

    const jobs = json<{ jobs: Array<{ job_id: string; status: string }> }>(await run('jobs', '--json'));
    assert.deepEqual(
      jobs.jobs.map((j) => [j.job_id, j.status]),
      [[job.job_id, 'complete']],
    );
    assert.match(
      ok(await run('jobs')).stdout,
      new RegExp(
        `^${job.job_id}\\s+complete\\s+\\S+:\\S+/p/ → \\S+:\\S+/q/\\s+2/2\\s+2 B\\s+\\S+ \\S+$`,
        'm',
      ),
    );
    assert.equal(json(await run('jobs', 'show', String(job.job_id), '--json')).overwrite, 'if-missing');
    // How its bytes were proven (docs/api.md, "Verification"): s3rver answers MD5s.
    assert.match(
      ok(await run('jobs', 'show', String(job.job_id))).stdout,
      /^proven:\s+every object written proven by checksum$/m,
    );
    const transfers = json<{ transfers: Array<{ id: string; kind: string }> }>(
      await run('transfers', '--json'),
    );
    assert.ok(transfers.transfers.some((x) => x.id === single.id && x.kind === 'copy'));
    const shown = ok(await run('transfers', 'show', String(single.id))).stdout;
    assert.match(shown, /^status:\s+complete$/m);
    assert.match(shown, /^proven:\s+checksum \(md5\)$/m);
  });
});
