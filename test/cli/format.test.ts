// The CLI's human output (src/cli/format.ts): tables aligned by the columns a cell takes on a terminal,
// counts in words with the right plural, a job's objects counted whole (deletions included), and the
// Content-Type an upload takes from its name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Job, Transfer } from '../../src/api/transfers.js';
import { counts, showJob, showTransfer } from '../../src/cli/commands/jobs.js';
import { contentTypeOf } from '../../src/cli/content-type.js';
import { count, table, zonedTime } from '../../src/cli/format.js';
import { barLine, jobProgress } from '../../src/cli/watch.js';
import { displayWidth } from '../../src/display.js';

test('a table keeps its columns straight when a cell holds wide characters (CJK, emoji)', () => {
  const rows = [
    { name: '日本語の図面.txt', size: '1.0 KiB', by: 'ann' },
    { name: '📁 photos', size: '12 B', by: 'bob' },
    { name: 'plain.txt', size: '3 B', by: 'cy' },
  ];
  const lines = table(rows, [
    { header: 'NAME', value: (r) => r.name },
    { header: 'SIZE', value: (r) => r.size, right: true },
    { header: 'BY', value: (r) => r.by },
  ]).split('\n');
  // The last column starts at the same terminal column on every line.
  const starts = lines.map((line) => displayWidth(line.slice(0, line.lastIndexOf(' ') + 1)));
  assert.equal(new Set(starts).size, 1, lines.join('\n'));
  assert.equal(lines[0], `NAME${' '.repeat(12)}     SIZE  BY`);
  assert.equal(lines[1], '日本語の図面.txt  1.0 KiB  ann');
  assert.equal(lines[2], `📁 photos${' '.repeat(7)}     12 B  bob`);
});

test('counts: "1 entry", "2 entries", "2 files", "0 files"', () => {
  assert.equal(count(1, 'entry'), '1 entry');
  assert.equal(count(2, 'entry'), '2 entries');
  assert.equal(count(2, 'file'), '2 files');
  assert.equal(count(0, 'file'), '0 files');
  assert.equal(count(3, 'key'), '3 keys', 'a vowel before the y: s');
});

test('a sync that deleted counts its deletions everywhere, and a complete job is 100 %', () => {
  const job = {
    job_id: '6f1c4a52-8f0e-4e53-9d43-3c2b8e1c0a11',
    kind: 'sync',
    status: 'complete',
    from: { id: 'a', path: 'b/' },
    to: { id: 'c', path: 'd/' },
    overwrite: 'always',
    created_at: '2026-12-02T10:00:00Z',
    updated_at: '2026-12-02T10:01:00Z',
    counts: { total: 250, pending: 0, succeeded: 247, skipped: 0, failed: 0, deleted: 3 },
    bytes_done: 2048,
  } as Job;
  assert.equal(counts(job), '250/250');
  assert.match(
    showJob(job),
    /^objects:\s+250 total, 247 copied, 0 skipped, 3 deleted, 0 failed, 0 pending$/m,
  );
  const p = jobProgress(job);
  assert.deepEqual({ done: p.done, total: p.total }, { done: 250, total: 250 });
  assert.match(barLine(p, 0, 0, 200), /^\[#{24}\] 100% {2}complete: 250\/250 objects, /);

  // A server whose total leaves the deletions out: still whole, never 247/250 or 253/250.
  const older = { ...job, counts: { ...job.counts, total: 247 } };
  assert.equal(counts(older), '250/250');
  assert.match(barLine(jobProgress(older), 0, 0, 200), /^\[#{24}\] 100% /);
  // A copy's counts, with deleted 0 or without it (an older server): no "0 deleted" to read past.
  const copy = { ...job, kind: 'copy', counts: { ...job.counts, deleted: 0, total: 247 } } as Job;
  assert.equal(counts(copy), '247/247');
  assert.match(showJob(copy), /^objects:\s+247 total, 247 copied, 0 skipped, 0 failed, 0 pending$/m);
  // An older server's counts had no deleted at all.
  const { deleted: _none, ...withoutDeleted } = copy.counts;
  assert.match(
    showJob({ ...copy, counts: withoutDeleted } as unknown as Job),
    /^objects:\s+247 total, 247 copied, 0 skipped, 0 failed, 0 pending$/m,
  );
  // A sync asked to delete that found nothing to delete says so.
  const none = { ...job, delete: true, counts: { ...job.counts, succeeded: 250, deleted: 0 } } as Job;
  assert.match(
    showJob(none),
    /^objects:\s+250 total, 250 copied, 0 skipped, 0 deleted, 0 failed, 0 pending$/m,
  );
});

test('a job and a transfer say how their bytes were proven, and how many by size alone', () => {
  const job = {
    job_id: '6f1c4a52-8f0e-4e53-9d43-3c2b8e1c0a11',
    kind: 'copy',
    status: 'complete',
    from: { id: 'a', path: 'b/' },
    to: { id: 'c', path: 'd/' },
    overwrite: 'always',
    created_at: '2026-12-02T10:00:00Z',
    updated_at: '2026-12-02T10:01:00Z',
    counts: { total: 6, pending: 0, succeeded: 6, skipped: 0, failed: 0, deleted: 0, size_only: 0 },
    bytes_done: 2048,
  } as Job;
  assert.match(showJob(job), /^proven:\s+every object written proven by checksum$/m);
  const some = { ...job, counts: { ...job.counts, size_only: 2 } } as Job;
  assert.match(
    showJob(some),
    /^proven:\s+2 of 6 written proven by size only \(no hash both sides report\)$/m,
  );
  // Nothing written, nothing to prove; a verify says what it found instead.
  assert.doesNotMatch(
    showJob({ ...job, counts: { ...job.counts, succeeded: 0, skipped: 6 } } as Job),
    /^proven:/m,
  );
  assert.doesNotMatch(showJob({ ...job, kind: 'verify' } as Job), /^proven:/m);
  const transfer = {
    id: '0d1c4a52-8f0e-4e53-9d43-3c2b8e1c0a11',
    kind: 'copy',
    status: 'complete',
    bytes_done: 3,
    created_at: '2026-12-02T10:00:00Z',
    updated_at: '2026-12-02T10:01:00Z',
  } as Transfer;
  assert.match(
    showTransfer({ ...transfer, verified: 'checksum', verified_by: 'md5,crc32c' }),
    /^proven:\s+checksum \(md5,crc32c\)$/m,
  );
  assert.match(showTransfer({ ...transfer, verified: 'size' }), /^proven:\s+size only/m);
  assert.doesNotMatch(showTransfer(transfer), /^proven:/m, 'a transfer still running is not proven yet');
});

test("an upload's Content-Type comes from the file name's extension, in any case; unknown or none is octet-stream", () => {
  assert.equal(contentTypeOf('reports/Q4.pdf'), 'application/pdf');
  assert.equal(contentTypeOf('Report.PDF'), 'application/pdf');
  assert.equal(contentTypeOf('site/index.html'), 'text/html');
  assert.equal(contentTypeOf('photos/IMG_0001.JPG'), 'image/jpeg');
  assert.equal(contentTypeOf('backup.tar.gz'), 'application/gzip', 'the last extension');
  assert.equal(contentTypeOf('data.bin'), 'application/octet-stream');
  assert.equal(contentTypeOf('home/.bashrc'), 'application/octet-stream', 'a dot file has no extension');
  assert.equal(contentTypeOf('v1.2/README'), 'application/octet-stream', 'a dot in a folder is no extension');
});

test('a time a person acts on is shown with its weekday in the zone given, naming it', () => {
  assert.equal(zonedTime('2026-12-04T00:00:00Z', 'Asia/Tokyo'), 'Fri 2026-12-04 09:00 (Asia/Tokyo)');
  assert.equal(
    zonedTime('2026-12-04T00:00:00Z', 'America/New_York'),
    'Thu 2026-12-03 19:00 (America/New_York)',
  );
  assert.equal(zonedTime('2026-07-01T12:30:00Z', 'Europe/Paris'), 'Wed 2026-07-01 14:30 (Europe/Paris)');
});
