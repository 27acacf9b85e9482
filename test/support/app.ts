// A real ferry app for HTTP tests: real database (SQLite file or PostgreSQL schema), real keyring,
// logs captured in memory so tests can search them for secrets. Requests go through inject().
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { CreatedApiKey } from '../../src/api/keys.js';
import type { Scope } from '../../src/api/scopes.js';
import { type Background, startBackground } from '../../src/background.js';
import { bootstrapIfEmpty } from '../../src/bootstrap.js';
import type { Clock } from '../../src/clock.js';
import { type Config, loadConfig, RATE_BUCKETS } from '../../src/config.js';
import type { WorkspaceRow } from '../../src/db/schema.js';
import type { RefresherOptions } from '../../src/domain/refresher/refresher.js';
import type { DelivererOptions } from '../../src/domain/webhooks/deliverer.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import type { Worker, WorkerOptions } from '../../src/engine/worker.js';
import { buildApp } from '../../src/http/app.js';
import { createLogger } from '../../src/log.js';
import { createServices, type Services } from '../../src/services.js';
import { createSchema, type TestDatabase } from './databases.js';

export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
}

const LIFTED_RATE_LIMITS = Object.fromEntries(
  RATE_BUCKETS.filter((bucket) => bucket !== 'copy').map((bucket) => [
    `FERRY_RATE_${bucket.toUpperCase()}_PER_MINUTE`,
    '1000000',
  ]),
);

export interface TestAppOptions {
  clock?: Clock;
  env?: Record<string, string>;
  /** Share the database of another test app (two processes on one PostgreSQL). */
  shareWith?: TestApp;
  /** Run a worker and the refresher in the same process, as `FERRY_ROLE=all` does. */
  worker?: Partial<WorkerOptions> | true;
  /** The refresher's options, with `worker`. */
  refresher?: Partial<RefresherOptions>;
  /** The send dispatcher's longest sleep, with `worker` (default 30 s). */
  sendPollMs?: number;
  /** The webhook deliverer's options, with `worker`. */
  webhooks?: Partial<DelivererOptions>;
}

export interface TestApp {
  app: FastifyInstance;
  services: Services;
  config: Config;
  logs: LogCapture;
  /** The bootstrap key of the `default` workspace. */
  token: string;
  worker: Worker | undefined;
  /** inject() with the bootstrap key unless headers.authorization is given. */
  request(options: InjectOptions & { token?: string | null }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function startTestApp(database: TestDatabase, options: TestAppOptions = {}): Promise<TestApp> {
  const shared = options.shareWith;
  const dataDir = shared ? shared.config.dataDir : mkdtempSync(join(tmpdir(), 'ferry-test-'));
  const schema = shared || database.name === 'sqlite' ? undefined : await createSchema();
  const masterKey = shared?.config.masterKey?.reveal() ?? randomBytes(32).toString('base64');
  const env: Record<string, string> = {
    FERRY_DATA_DIR: dataDir,
    FERRY_MASTER_KEY: masterKey,
    FERRY_LOG_LEVEL: 'debug',
    // Tests of other rules run many requests in one workspace within a minute: the rate limits are
    // lifted unless a test sets them (test/http/rate-limits.test.ts does); copy keeps its 30, which
    // docs/api.md fixes and test/http/copy.test.ts checks.
    ...LIFTED_RATE_LIMITS,
    ...(schema ? { FERRY_DATABASE_URL: schema.url } : {}),
    ...(shared?.config.databaseUrl ? { FERRY_DATABASE_URL: shared.config.databaseUrl.reveal() } : {}),
    ...options.env,
  };
  const config = loadConfig(env);
  const logs = new LogCapture();
  const logger = createLogger('debug', logs);
  const services = await createServices(config, {
    logger,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const app = await buildApp(services);
  await app.ready();
  let background: Background | undefined;
  if (options.worker) {
    background = startBackground(services, {
      worker: options.worker === true ? { pollMs: 50 } : { pollMs: 50, ...options.worker },
      ...(options.refresher ? { refresher: options.refresher } : {}),
      ...(options.sendPollMs === undefined ? {} : { sendPollMs: options.sendPollMs }),
      ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    });
  }
  const worker: Worker | undefined = background?.worker;
  let token = shared?.token ?? '';
  if (!shared) {
    const file = await bootstrapIfEmpty(services);
    if (!file) throw new Error('test database was not empty');
    const { readFileSync } = await import('node:fs');
    token = readFileSync(file, 'utf8').trim();
  }
  return {
    app,
    services,
    config,
    logs,
    token,
    worker,
    request({ token: as, ...opts }) {
      const headers = { ...(opts.headers ?? {}) } as Record<string, string>;
      const key = as === undefined ? token : as;
      if (key !== null && headers.authorization === undefined) headers.authorization = `Bearer ${key}`;
      return app.inject({ ...opts, headers });
    },
    async close() {
      try {
        await app.close();
        await background?.stop(5000);
        await services.close();
      } finally {
        // Whatever closing threw, the schema and the folder go (a run left one schema behind per suite).
        if (!shared) {
          await schema?.drop();
          rmSync(dataDir, { recursive: true, force: true });
        }
      }
    },
  };
}

/**
 * A workspace of its own, a key (every scope unless given) and an s3 location whose endpoint nothing
 * listens on, made through the API: for the rules ferry checks before it calls any store (no worker
 * runs in these apps, so nothing ever connects).
 */
export async function idleWorkspace(
  t: TestApp,
  scopes?: readonly Scope[],
): Promise<{ ws: WorkspaceRow; key: CreatedApiKey; label: string; locationId: string }> {
  const ws = await ensureWorkspace(
    t.services.db.kysely,
    `ws-${randomBytes(6).toString('hex')}`,
    t.services.clock,
  );
  const key = await t.services.apiKeys.create(ws.id, {
    name: `k-${randomBytes(6).toString('hex')}`,
    ...(scopes ? { scopes } : {}),
  });
  const label = `loc-${randomBytes(6).toString('hex')}`;
  const location = await t.request({
    method: 'POST',
    url: '/v1/locations',
    token: key.token,
    payload: {
      provider: 's3',
      label,
      secret: { access_key_id: 'AKID', secret_access_key: randomBytes(12).toString('hex') },
      metadata: { endpoint: 'http://127.0.0.1:9' },
    },
  });
  if (location.statusCode !== 201) throw new Error(`the location was not made: ${location.body}`);
  return { ws, key, label, locationId: location.json().id as string };
}

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private ms = Date.parse('2026-11-22T12:00:00Z')) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
}
