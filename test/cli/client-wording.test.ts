// `ferry` speaks about what was typed (docs/cli.md), run as a real process against a ferry service in
// this process, on both databases: a path on this computer is refused by ls with advice before any request;
// a name holding a newline or a right-to-left override keeps its row in `ls`, escaped; the copy
// grammar's mix-ups come back with the rewritten place.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isLocalPath } from '../../src/cli/targets.js';
import { eachDatabase } from '../support/fixtures.js';
import { seedBucket } from '../support/transfers.js';
import { type Service, startService } from './service.js';

test('paths on this computer are told apart from places in a location', () => {
  for (const local of ['.', '..', './report.pdf', '../x', '/tmp/report.pdf', '~/report.pdf', '~'])
    assert.equal(isLocalPath(local), true, local);
  for (const place of ['photos', 'photos:bucket/a', 'photos/bucket/a', 'a.b:x', '.hidden:x/y'])
    assert.equal(isLocalPath(place), false, place);
});

await eachDatabase('ferry client wording', (database) => {
  let s: Service;
  before(async () => {
    s = await startService(database);
  });
  after(() => s.close());

  test('local paths are refused with advice; odd names keep one escaped row each; mix-ups are explained', async () => {
    const { run } = await s.workspace();
    const label = await s.location(run);
    const local = await run('ls', './report.pdf');
    assert.equal(local.code, 2);
    assert.equal(
      local.stderr,
      'ferry: "./report.pdf" is a path on this computer; only cp and mv take one (to upload or download); here name a place in a location, written location:bucket/path (ferry locations lists them)\n',
    );

    const bucket = await seedBucket(s.client, {
      'dir/two\nlines.txt': 'a',
      'dir/invoice\u202Etxt.exe': 'b',
      'dir/plain.txt': 'c',
    });
    const ls = await run('ls', `${label}:${bucket}/dir`);
    assert.equal(ls.code, 0, ls.stderr);
    const rows = ls.stdout.trimEnd().split('\n');
    // The header, one row per file, the summary.
    assert.equal(rows.length, 5, JSON.stringify(ls.stdout));
    assert.ok(
      rows.some((r) => r.includes('two\\nlines.txt')),
      ls.stdout,
    );
    assert.ok(
      rows.some((r) => r.includes('invoice<U+202E>txt.exe')),
      ls.stdout,
    );
    assert.ok(!ls.stdout.includes('\u202E'));

    const slip = await run('cp', `${label}:${bucket}/dir`, `${label}:backup/x/`);
    assert.equal(slip.code, 2);
    assert.match(
      slip.stderr,
      /"to" ends with "\/" \(a prefix\) but "from" names one object: end "from" with "\/"/,
    );
  });
});
