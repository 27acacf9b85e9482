// A ferry service for the client tests, in this process: HTTP on a free port, a worker, s3rver as
// storage, an HTTP origin for pulls and an SMTP server for sends. Each test takes a workspace of its own
// (own key, own copy limit, own locations) and runs the CLI with settings that reach it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { startTestApp, type TestApp } from '../support/app.js';
import type { TestDatabase } from '../support/databases.js';
import { unique } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { TestSmtp } from '../support/smtp.js';
import { s3Client } from '../support/transfers.js';
import { ferry, type Run } from './run.js';

export const ok = (r: Run): Run => {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
};
export const json = <T = Record<string, unknown>>(r: Run): T => JSON.parse(ok(r).stdout) as T;

export interface Workspace {
  /** The workspace's name (for the operator's door, `keys create --workspace NAME`). */
  name: string;
  env: Record<string, string>;
  token: string;
  run: (...args: string[]) => Promise<Run>;
}

export interface Service {
  t: TestApp;
  url: string;
  s3: S3rverHandle;
  client: S3Client;
  smtp: TestSmtp;
  /** http://127.0.0.1:PORT answering every GET with the 6 bytes "pulled". */
  origin: string;
  /** A temporary directory for config dirs, secrets and manifests. */
  home: string;
  workspace(): Promise<Workspace>;
  /** The FERRY_* settings that reach this service's database, for the server-side commands. */
  serverEnv(): Record<string, string>;
  /** An s3 location on s3rver, made with the CLI; returns its label. */
  location(run: Workspace['run'], label?: string): Promise<string>;
  close(): Promise<void>;
}

export async function startService(database: TestDatabase): Promise<Service> {
  const [s3, smtp] = await Promise.all([startS3rver(), new TestSmtp().start()]);
  const client = s3Client(s3.endpoint);
  // Every path answers the same file, but /missing, which is 404 (a pull that fails).
  const web: Server = createServer((req, res) =>
    req.url === '/missing'
      ? res.writeHead(404).end('no')
      : res.writeHead(200, { 'content-length': 6 }).end('pulled'),
  );
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  const t = await startTestApp(database, {
    env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_SMTP_URL: smtp.url },
    worker: true,
  });
  const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const home = mkdtempSync(join(tmpdir(), 'ferry-cli-home-'));
  const service: Service = {
    t,
    url,
    s3,
    client,
    smtp,
    origin,
    home,
    async workspace() {
      const ws = await ensureWorkspace(t.services.db.kysely, unique('ws'), t.services.clock);
      const { token } = await t.services.apiKeys.create(ws.id, { name: 'cli test' });
      const env = { FERRY_URL: url, FERRY_API_KEY: token, XDG_CONFIG_HOME: join(home, unique('cfg')) };
      return { name: ws.name, env, token, run: (...args) => ferry(args, { env }) };
    },
    serverEnv() {
      const { dataDir, databaseUrl, masterKey } = t.config;
      return {
        FERRY_DATA_DIR: dataDir,
        ...(databaseUrl ? { FERRY_DATABASE_URL: databaseUrl.reveal() } : {}),
        ...(masterKey ? { FERRY_MASTER_KEY: masterKey.reveal() } : {}),
        XDG_CONFIG_HOME: join(home, unique('cfg')),
      };
    },
    async location(run, label = unique('s3')) {
      const file = join(home, unique('secret'));
      writeFileSync(file, JSON.stringify({ access_key_id: 'AKID', secret_access_key: 'SAK' }));
      const created = json(
        await run(
          'locations',
          'create',
          '--provider',
          's3',
          '--label',
          label,
          '--secret-file',
          file,
          '--endpoint',
          s3.endpoint,
          '--json',
        ),
      );
      assert.deepEqual(created, {
        id: created.id,
        provider: 's3',
        label,
        metadata: { endpoint: s3.endpoint },
      });
      return label;
    },
    async close() {
      await t.close();
      client.destroy();
      web.close();
      await Promise.all([s3.close(), smtp.close()]);
      rmSync(home, { recursive: true, force: true });
    },
  };
  return service;
}
