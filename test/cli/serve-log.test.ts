// Everything `ferry serve` writes is a JSON log line (README, "Start-up"), including warnings Node
// or a library emits: the AWS SDK's notice that later releases need Node 22 came out as plain text
// on every start on Node 20. SQLite only: what is tested is the process's output, not the database.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { apiCall, killAll, s3Location, startServe } from '../support/processes.js';
import { startS3rver } from '../support/s3rver.js';

const dataDir = mkdtempSync(join(tmpdir(), 'ferry-serve-log-'));
after(async () => {
  await killAll();
  rmSync(dataDir, { recursive: true, force: true });
});

test('every line serve prints, a library warning included, is one JSON object', async () => {
  const s3 = await startS3rver();
  after(() => s3.close());
  // AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED would hide the warning this test looks for.
  const server = await startServe('serve', {
    FERRY_DATA_DIR: dataDir,
    FERRY_EGRESS_ALLOW: '127.0.0.1',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: '',
  });
  const { origin } = server;
  const token = readFileSync(join(dataDir, 'bootstrap-key'), 'utf8').trim();
  const location = await s3Location(origin, token, s3.endpoint, 'serve-log');
  // Listing builds the S3 client, which is when the SDK checks the Node version.
  const listed = await apiCall(origin, token, 'POST', '/v1/list', { id: location });
  assert.equal(listed.status, 200, JSON.stringify(listed.json));

  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) {
    const line = await server.waitForLine(/NodeVersionSupportWarning/, 10_000);
    assert.equal(JSON.parse(line).level, 40, 'logged at warn');
  }
  await server.stop();
  const notJson = server.lines.filter((l) => {
    try {
      return typeof JSON.parse(l) !== 'object';
    } catch {
      return true;
    }
  });
  assert.deepEqual(notJson, [], server.log());
});
