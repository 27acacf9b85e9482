// A webhook event outlives the process that recorded it, on both databases: a real `ferry serve` with
// FERRY_ROLE=api (no deliverer) counts a share download, which queues share.downloaded, and is killed
// (SIGKILL) before anything is delivered; a new `ferry serve` with FERRY_ROLE=all on the same database
// delivers the event, signed, to a local receiver.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { createSchema } from '../support/databases.js';
import { eachDatabase, unique } from '../support/fixtures.js';
import { apiCall, killAll, startServe } from '../support/processes.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { s3Client, seedBucket } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';
import { Receiver } from './receiver.js';

await eachDatabase('webhook delivery after a restart', (database) => {
  let s3: S3rverHandle;
  let client: S3Client;
  let receiver: Receiver;
  let dataDir: string;
  let schema: Awaited<ReturnType<typeof createSchema>> | undefined;

  before(async () => {
    [s3, receiver] = await Promise.all([startS3rver(), new Receiver().start()]);
    client = s3Client(s3.endpoint);
    dataDir = mkdtempSync(join(tmpdir(), 'ferry-webhooks-'));
    if (database.name === 'postgres') schema = await createSchema();
  });
  after(async () => {
    await killAll();
    client?.destroy();
    await Promise.all([s3?.close(), receiver?.close(), schema?.drop()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('an event recorded by a process killed before delivering it is delivered by the next one', async () => {
    const env = {
      FERRY_DATA_DIR: dataDir,
      FERRY_EGRESS_ALLOW: '127.0.0.1/32',
      FERRY_MASTER_KEY: randomBytes(32).toString('base64'),
      FERRY_SHUTDOWN_SECONDS: '0',
      ...(schema ? { FERRY_DATABASE_URL: schema.url } : {}),
    };
    const api = await startServe('api', { ...env, FERRY_ROLE: 'api' });
    const token = readFileSync(join(dataDir, 'bootstrap-key'), 'utf8').trim();
    // The process running now: each has a port of its own.
    let origin = api.origin;
    const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
      apiCall<T>(origin, token, method, path, body);

    const created = await call<{ id: string; secret: string }>('POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['share.downloaded'],
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const label = unique('s3');
    const loc = await call('POST', '/v1/locations', {
      provider: 's3',
      label,
      secret: { access_key_id: 'HOOKKEY', secret_access_key: 'hook-secret' },
      metadata: { endpoint: s3.endpoint },
    });
    assert.equal(loc.status, 201, JSON.stringify(loc.json));
    const bucket = await seedBucket(client, { 'report.pdf': 'the report' });
    const share = await call<{ id: string; url: string }>('POST', '/share', {
      file: `${label}/${bucket}/report.pdf`,
    });
    assert.equal(share.status, 201, JSON.stringify(share.json));
    // The link's path, at the process: its origin (FERRY_PUBLIC_URL) cannot name a port that is the
    // system's choice, known only once the process has bound it.
    const download = await fetch(`${origin}${new URL(share.json.url).pathname}`);
    assert.equal(download.status, 200);
    assert.equal(await download.text(), 'the report');

    await api.kill();
    assert.equal(receiver.connections, 0, 'the api process delivers nothing');

    const all = await startServe('all', { ...env, FERRY_ROLE: 'all' });
    origin = all.origin;
    const [request] = await waitUntil(() => (receiver.received.length > 0 ? receiver.received : undefined), {
      what: 'the delivery by the new process',
      detail: () => all.log(),
    });
    assert.ok(request);
    const event = receiver.verify(request, created.json.secret);
    assert.equal(event.type, 'share.downloaded');
    assert.equal(event.data.id, share.json.id);
    assert.equal(event.data.downloads, 1);
    const log = await waitUntil(
      async () => {
        const res = await call<{ deliveries: Array<{ status_code?: number }> }>(
          'GET',
          `/v1/webhooks/${created.json.id}/deliveries`,
        );
        return res.json.deliveries.length > 0 ? res.json.deliveries : undefined;
      },
      { what: 'the attempt in the log' },
    );
    assert.deepEqual(
      log.map((d) => d.status_code),
      [204],
    );
    assert.ok(!all.log().includes(created.json.secret.slice(6)), 'the secret is in no log line');
    await all.stop();
  });
});
