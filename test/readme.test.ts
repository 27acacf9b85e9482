// The README's walk-through ("First steps") runs as it stands: its first bash block, executed top to
// bottom against a `ferry serve` started the way the README starts it (a fresh data folder, SQLite),
// with s3rver as the S3 account, smtp-server as the mail server and a local web server for the pull.
// Only what must differ on a machine without the internet is replaced, each by its exact text: the
// server address (the server listens on a port of the system's choice, FERRY_PORT=0, so the README's
// 127.0.0.1:8080 becomes the address its listening line names), the credentials and region (to point
// at s3rver), and the pulled URL. Every curl fails the block on an HTTP error (--fail-with-body), so a
// step that no longer works fails the test.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { killAll, startServe } from './support/processes.js';
import { startS3rver } from './support/s3rver.js';
import { TestSmtp } from './support/smtp.js';
import { readS3, s3Client } from './support/transfers.js';
import { waitUntil } from './support/wait.js';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The first ```sh block after the heading. */
function block(heading: string): string {
  const at = README.indexOf(`\n## ${heading}\n`);
  assert.ok(at >= 0, `README has no "## ${heading}"`);
  const start = README.indexOf('```sh\n', at);
  const end = README.indexOf('\n```', start + 6);
  assert.ok(start >= 0 && end > start, `no sh block under "## ${heading}"`);
  return README.slice(start + 6, end + 1);
}

/** `text` with `from` replaced by `to`; `from` must be there, so a README edit cannot skip the check. */
function replaced(text: string, from: string, to: string): string {
  assert.ok(text.includes(from), `the walk-through no longer contains ${JSON.stringify(from)}`);
  return text.replaceAll(from, to);
}

const home = mkdtempSync(join(tmpdir(), 'ferry-readme-'));
after(async () => {
  await killAll();
  rmSync(home, { recursive: true, force: true });
});

test('the README walk-through runs top to bottom, and does what it says', async () => {
  const s3 = await startS3rver();
  const smtp = await new TestSmtp().start();
  const web = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.7 report'),
  );
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  const client = s3Client(s3.endpoint);
  after(async () => {
    client.destroy();
    web.close();
    await smtp.close();
    await s3.close();
  });
  await client.send(new CreateBucketCommand({ Bucket: 'my-bucket' }));
  await client.send(new CreateBucketCommand({ Bucket: 'backup' }));
  const seed = [
    'a.jpg',
    '2026/01.jpg',
    '2026/02.jpg',
    'inbox/x.jpg',
    'inbox/y.jpg',
    'inbox/keep.txt',
    'tmp/t1',
    'tmp/sub/t2',
  ];
  for (const Key of seed)
    await client.send(new PutObjectCommand({ Bucket: 'my-bucket', Key, Body: `bytes of ${Key}` }));

  const server = await startServe('readme', {
    FERRY_DATA_DIR: join(home, 'data'),
    FERRY_EGRESS_ALLOW: '127.0.0.1',
    FERRY_SMTP_URL: smtp.url,
  });

  let script = block('First steps');
  script = replaced(script, 'F=http://127.0.0.1:8080', `F=${server.origin}`);
  script = replaced(
    script,
    `SECRET='{"access_key_id":"AKIA…","secret_access_key":"…"}'`,
    `SECRET='{"access_key_id":"README","secret_access_key":"readme-secret"}'`,
  );
  script = replaced(
    script,
    `META='{"region":"eu-west-1"}'`,
    `META='{"region":"us-east-1","endpoint":"${s3.endpoint}"}'`,
  );
  script = replaced(
    script,
    'https://example.com/report.pdf',
    `http://127.0.0.1:${(web.address() as AddressInfo).port}/report.pdf`,
  );
  const prelude = 'set -euo pipefail\ncurl() { command curl --fail-with-body --show-error "$@"; }\n';
  const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn('bash', ['-c', prelude + script], { cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
  assert.equal(run.code, 0, `the walk-through stopped:\n${run.out}\n${server.log()}`);

  // What it said it would do, once the background work has run.
  const read = (bucket: string, key: string) => readS3(client, bucket, key);
  await waitUntil(async () => (await read('backup', 'a.jpg'))?.toString() === 'bytes of a.jpg', {
    what: 'the single copy',
  });
  await waitUntil(async () => (await read('backup', '2026/02.jpg')) !== undefined, {
    what: 'the prefix copy',
  });
  await waitUntil(async () => (await read('my-bucket', 'sorted/x.jpg')) !== undefined, { what: 'the move' });
  await waitUntil(async () => (await read('my-bucket', 'tmp/sub/t2')) === undefined, { what: 'the removal' });
  await waitUntil(async () => (await read('my-bucket', 'report.pdf'))?.toString() === '%PDF-1.7 report', {
    what: 'the pull',
  });
  assert.equal((await read('my-bucket', 'inbox/keep.txt'))?.toString(), 'bytes of inbox/keep.txt');
  assert.equal(await read('my-bucket', 'inbox/x.jpg'), undefined);
  assert.match(run.out, /"status":"scheduled"/, 'the send is scheduled');
  assert.match(run.out, /"plan_id":"[0-9a-f-]{36}"/, "the sync's dry run answers a plan");
  assert.match(run.out, /"name":"nightly mirror"[^\n]*"next_run_at":"/, 'the schedule has its next run');
  // The link names the port bound (FERRY_PORT=0 without FERRY_PUBLIC_URL: src/server.ts), not :0.
  assert.ok(run.out.includes(`"url":"${server.origin}/s/`), `the share link is shown at ${server.origin}`);
  assert.doesNotMatch(run.out, /readme-secret/, 'no answer carries the secret');
  // A new user's server warns of nothing on any Node the README names (the AWS SDK's notice that its
  // releases after January 2027 need Node 22 was logged at every start on Node 20: src/stores/shared/sdk.ts).
  assert.deepEqual(
    server.lines.filter((l) => l.includes('"warning":')),
    [],
    'ferry serve logged a process warning',
  );
});
