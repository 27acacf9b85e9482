// Work that kills every process that takes it is not taken again forever (docs/api.md, "Background
// work that keeps failing"): a pull is claimed by a real `ferry serve`, which is killed with SIGKILL
// while it holds the transfer, as many times as FERRY_WORK_MAX_CRASHES allows (each next process takes
// it over when the lease runs out); the process after that fails the transfer with the reason instead
// of claiming it again. On SQLite (one process at a time on one data dir) and on PostgreSQL, one file
// each (poison-restart-{sqlite,postgres}.test.ts): process startups take long on a busy machine.
//
// The pull's URL is a server in this process that never answers, so the transfer is certainly
// running (its request arrived) when the process is killed. FERRY_WORK_MAX_CRASHES=1 and the shortest
// lease keep the test short (each process start takes seconds); test/engine/crashing-work.test.ts
// shows the default of 3, with the leases of dead processes written directly.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createSchema, testDatabases } from '../support/databases.js';
import {
  apiCall,
  killAll,
  listeningOrigin,
  type ServeProcess,
  s3Location,
  startFerry,
} from '../support/processes.js';
import { waitUntil } from '../support/wait.js';

const MAX_CRASHES = 1;

/** A server that counts the requests it gets and answers none of them. */
async function startSilentServer(): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server = http.createServer(() => {
    requests++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * `ferry serve` on a port of the system's choice, once listening; with a generous wait, as startups are
 * slow on a busy machine. Each process has its own port: `origin` says which.
 */
async function serve(name: string, env: Record<string, string>): Promise<ServeProcess> {
  const server = startFerry(name, ['serve'], { ...env, FERRY_PORT: '0' });
  return Object.assign(server, { origin: await listeningOrigin(server, 120_000) });
}

/** The test on one database (its own file calls it). */
export async function poisonRestart(name: 'sqlite' | 'postgres'): Promise<void> {
  const database = (await testDatabases()).find((d) => d.name === name);
  if (!database) throw new Error(`no database ${name}`);
  after(() => killAll());
  test(`[${database.name}] a pull whose process was killed with SIGKILL is failed by the next process, not claimed again`, {
    skip: database.skip ?? false,
  }, async () => {
    const silent = await startSilentServer();
    const schema = database.name === 'postgres' ? await createSchema() : undefined;
    const dir = mkdtempSync(join(tmpdir(), 'ferry-poison-'));
    try {
      const env: Record<string, string> = {
        FERRY_DATA_DIR: dir,
        FERRY_MASTER_KEY: randomBytes(32).toString('base64'),
        FERRY_EGRESS_ALLOW: '127.0.0.1/32',
        FERRY_WORKER_LEASE_SECONDS: '3',
        FERRY_WORK_MAX_CRASHES: String(MAX_CRASHES),
        FERRY_SHUTDOWN_SECONDS: '1',
        ...(schema ? { FERRY_DATABASE_URL: schema.url } : {}),
      };
      let server = await serve('ferry-1', env);
      const token = readFileSync(join(dir, 'bootstrap-key'), 'utf8').trim();
      // Whichever process is the last started, at its own port.
      const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
        apiCall<T>(server.origin, token, method, path, body);
      // Never contacted: the pull hangs on its source first.
      const location = await s3Location(server.origin, token, 'http://127.0.0.1:9', 'AK');
      const pull = await call('POST', '/pull', {
        from: `${silent.url}/file.bin`,
        to: `${location}/b/file.bin`,
      });
      assert.equal(pull.status, 200, JSON.stringify(pull.json));
      const id = String(pull.json.id);

      for (let crash = 1; crash <= MAX_CRASHES; crash++) {
        // The process took the transfer (its request reached the source) and dies holding it.
        await waitUntil(() => silent.requests() === crash, {
          what: `claim ${crash} of the transfer`,
          detail: () => server.log(),
        });
        assert.equal((await server.kill()).signal, 'SIGKILL');
        server = await serve(`ferry-${crash + 1}`, env);
      }
      // The next process fails it when the lease of the last claim runs out, instead of claiming it.
      const ended = await waitUntil(
        async () => {
          const res = await call<{ status: string; error?: string }>('GET', `/v1/transfers/${id}`);
          assert.equal(res.status, 200, JSON.stringify(res.json));
          return res.json.status === 'running' || res.json.status === 'queued' ? undefined : res.json;
        },
        { what: 'the transfer to end', pauseMs: 200, detail: () => server.log() },
      );
      assert.equal(ended.status, 'failed');
      assert.equal(
        ended.error,
        'the worker crashed 1 time on this work: its process stopped while running it (the lease ran out)',
      );
      assert.equal(silent.requests(), MAX_CRASHES, 'not claimed again');
      assert.equal((await server.stop()).code, 0, server.log());
    } finally {
      await killAll();
      await silent.close();
      await schema?.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
