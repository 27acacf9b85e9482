// `ferry jobs report` (docs/cli.md), run as a real process against a ferry service in this process, on
// both databases: the report of a partial job as NDJSON on stdout, as CSV into a file with -o, and a
// job that is not there exits 3.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { eachDatabase, unique } from '../support/fixtures.js';
import { seedBucket } from '../support/transfers.js';
import { json, ok, type Service, startService } from './service.js';

await eachDatabase('ferry jobs report', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('jobs report prints NDJSON, --csv -o FILE writes CSV, an unknown job exits 3', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const src = await seedBucket(s.client, { 'p/a.txt': 'a', 'p/=b.txt': 'b' });
    const dst = await seedBucket(s.client, {});
    const manifest = join(s.home, unique('manifest'));
    writeFileSync(manifest, 'a.txt\n=b.txt\nmissing.txt\n');
    const job = json(
      await run('cp', `${label}:${src}/p/`, `${label}:${dst}/p/`, '--manifest', manifest, '--json'),
    );
    const id = String(job.job_id);
    assert.equal((await run('jobs', 'watch', id, '--interval', '0.1')).code, 6);

    const lines = ok(await run('jobs', 'report', id))
      .stdout.trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      lines.map((l) => [l.key, l.outcome]),
      [
        ['a.txt', 'copied'],
        ['=b.txt', 'copied'],
        ['missing.txt', 'failed'],
      ],
    );
    assert.match(lines[2].error, /NoSuchKey|NotFound|not found/i);

    const file = join(s.home, unique('report.csv'));
    const saved = ok(await run('jobs', 'report', id, '--csv', '-o', file));
    assert.equal(saved.stdout, '');
    const rows = readFileSync(file, 'utf8').split('\r\n');
    assert.equal(
      rows[0],
      'key,outcome,size,bytes,attempts,error,reason,source_hash,destination_hash,verified,verified_by',
    );
    assert.match(rows[1] ?? '', /^a\.txt,copied,1,1,1,,,/);
    assert.match(rows[2] ?? '', /^'=b\.txt,copied,1,1,1,,,/);
    assert.match(rows[3] ?? '', /^missing\.txt,failed,/);

    const missing = join(s.home, unique('none.csv'));
    const unknown = await run('jobs', 'report', randomUUID(), '-o', missing);
    assert.equal(unknown.code, 3, unknown.stderr);
    assert.match(unknown.stderr, /was not found/);
    assert.equal(existsSync(missing), false);
    assert.equal(existsSync(`${missing}.part`), false);
  });
});
