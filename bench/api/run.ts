// bench/api: requests per second and p99 latency of the authenticated GET /v1/locations (100
// locations) and of GET /healthz, each against a bare Fastify route that sends the same bytes as the
// list (bench/api/bare.mjs, the machine's ceiling), measured in turn (bare, health, list) for --runs
// rounds, medians and ratios printed; and the latency of reading a job (GET /v1/jobs/{id}) of 1,000 and
// of 100,000 objects, one request at a time. The server runs as its own process (the built program, as
// `npm start` runs it, at the default settings: info logging, metrics on) on SQLite, or on PostgreSQL
// with --postgres. --cpu-prof DIR profiles the server (node --cpu-prof) for the whole run.
//   npm run bench:api [-- --seconds 10 --connections 50 --runs 3 --postgres --cpu-prof /tmp/prof]
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.js';
import * as jobs from '../../src/lifecycle/jobs.js';
import { keyHash } from '../../src/lifecycle/object-planning.js';
import { Secret } from '../../src/secret.js';
import { median } from '../support/figures.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    postgres: { type: 'boolean', default: false },
    runs: { type: 'string', default: '3' },
    'cpu-prof': { type: 'string' },
  },
});
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const root = new URL('../..', import.meta.url).pathname;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitReady(base: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not start');
}

async function measure(url: string, headers: Record<string, string>) {
  const result = await autocannon({ url, connections, duration: seconds, headers });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p99: result.latency.p99 };
}

/** A planned job of `objects` objects in the server's database, written as the planner writes it. */
async function seedJob(workspaceId: string, objects: number): Promise<string> {
  const db = openDatabase({
    dataDir,
    databaseUrl: env.FERRY_DATABASE_URL ? new Secret(env.FERRY_DATABASE_URL) : undefined,
  });
  try {
    const now = Date.now();
    const ref = (path: string) => JSON.stringify({ location_id: crypto.randomUUID(), path });
    const { job_id } = await jobs.create(
      db.kysely,
      {
        id: crypto.randomUUID(),
        workspaceId,
        source: ref('bucket/from/'),
        destination: ref('bucket/to/'),
        overwrite: 'always',
        manifest: undefined,
      },
      now,
    );
    await db.kysely.updateTable('jobs').set({ lease_owner: 'bench' }).where('id', '=', job_id).execute();
    for (let from = 0; from < objects; from += 1000) {
      const batch = Array.from({ length: Math.min(1000, objects - from) }, (_, i) => {
        const key = `object-${from + i}`;
        return { key, keyHash: keyHash(key), size: 4096, etag: null };
      });
      await jobs.commitBatch(db.kysely, 'bench', job_id, from, batch, now);
    }
    await jobs.planningDone(db.kysely, 'bench', job_id, now);
    return job_id;
  } finally {
    await db.close();
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'ferry-bench-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
let schema: string | undefined;
const env: Record<string, string> = {
  ...process.env,
  FERRY_DATA_DIR: dataDir,
  FERRY_PORT: String(port),
  // The defaults users run: info logging (one line per request), metrics on. The log goes to a file,
  // as a service's does, not to this terminal.
  FERRY_LOG_LEVEL: 'info',
  // No worker: the jobs read below are written here and must stay as written.
  FERRY_ROLE: 'api',
  // A load generator is one client on a few connections: the per-connection request cap and the
  // per-workspace rate limits (docs/api.md) would answer it 503 and 429. The checks still run.
  FERRY_HTTP_MAX_REQUESTS_PER_CONNECTION: '1000000',
  FERRY_RATE_LOCATIONS_PER_MINUTE: '1000000',
  FERRY_RATE_LIST_PER_MINUTE: '1000000',
} as Record<string, string>;
if (values.postgres) {
  schema = `ferry_bench_${Date.now()}`;
  const url = process.env.FERRY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`create schema ${schema}`);
  await c.end();
  env.FERRY_DATABASE_URL = `${url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}
const profile = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']] : [];
const logFile = join(dataDir, 'ferry.log');
const server: ChildProcess = spawn(process.execPath, [...profile, join(root, 'bin/ferry.js'), 'serve'], {
  env,
  stdio: ['ignore', openSync(logFile, 'a'), 'inherit'],
});
let bare: ChildProcess | undefined;
try {
  await waitReady(base);
  const key = readFileSync(join(dataDir, 'bootstrap-key'), 'utf8').trim();
  const auth = { authorization: `Bearer ${key}` };
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${base}/v1/locations`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        provider: i % 2 ? 's3' : 'dropbox',
        label: `location-${i}`,
        secret:
          i % 2
            ? { access_key_id: `AK${i}`, secret_access_key: `SK${i}` }
            : { access_token: `a${i}`, refresh_token: `r${i}`, expiry: '2030-01-01T00:00:00Z' },
        metadata: { region: 'eu-west-1' },
      }),
    });
    if (res.status !== 201) throw new Error(`create failed: ${res.status}`);
  }
  const list = (await (await fetch(`${base}/v1/locations`, { headers: auth })).json()) as unknown[];
  if (list.length !== 100) throw new Error(`expected 100 locations, got ${list.length}`);

  // The peer: the same bytes from a bare Fastify route in a process of its own.
  const listBody = await (await fetch(`${base}/v1/locations`, { headers: auth })).text();
  const bodyFile = join(dataDir, 'list.json');
  writeFileSync(bodyFile, listBody);
  const barePort = await freePort();
  bare = fork(join(root, 'bench/api/bare.mjs'), [], {
    env: { ...process.env, BARE_BODY: bodyFile, BARE_PORT: String(barePort) },
    execArgv: [],
  });
  await new Promise<void>((resolve, reject) => {
    bare?.once('message', () => resolve());
    bare?.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  const targets = [
    {
      name: 'bare Fastify route, the same bytes as the list (peer)',
      url: `http://127.0.0.1:${barePort}/bare`,
      headers: {},
    },
    { name: 'GET /healthz', url: `${base}/healthz`, headers: {} },
    { name: 'GET /v1/locations (authenticated, 100 locations)', url: `${base}/v1/locations`, headers: auth },
  ];
  for (const target of targets) await measure(target.url, target.headers); // warm-up
  const results = targets.map(() => [] as { rps: number; p99: number }[]);
  for (let run = 0; run < runs; run++) {
    for (const [i, target] of targets.entries()) results[i]?.push(await measure(target.url, target.headers));
  }
  const rps = results.map((r) => median(r.map((x) => x.rps)));
  const database = values.postgres ? 'PostgreSQL' : 'SQLite';
  console.log(
    `\nbench/api — ${database}, ${connections} connections, ${seconds} s each, median of ${runs} interleaved rounds, node ${process.version}\n`,
  );
  console.log(`| endpoint | req/s | p99 ms | ratio to the bare route | each run, req/s |`);
  console.log('|---|---:|---:|---:|---|');
  for (const [i, target] of targets.entries()) {
    const r = results[i] ?? [];
    console.log(
      `| ${target.name} | ${(rps[i] ?? 0).toFixed(0)} | ${median(r.map((x) => x.p99))} | ${((rps[i] ?? 0) / (rps[0] ?? 1)).toFixed(2)} | ${r.map((x) => x.rps.toFixed(0)).join(', ')} |`,
    );
  }
  console.log(
    `\nlist / bare ${((rps[2] ?? 0) / (rps[0] ?? 1)).toFixed(2)} (goal ≥ 0.50), healthz / bare ${((rps[1] ?? 0) / (rps[0] ?? 1)).toFixed(2)} (goal ≥ 1.0), list / healthz ${((rps[2] ?? 0) / (rps[1] ?? 1)).toFixed(2)}`,
  );
  const logLines = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"msg":"request"')).length;
  console.log(`(the server wrote ${logLines.toLocaleString('en')} request log lines)`);

  // Reading a job: its counters, whatever its size. One request at a time, so the latency is the cost.
  const workspace = await (async () => {
    const db = openDatabase({
      dataDir,
      databaseUrl: env.FERRY_DATABASE_URL ? new Secret(env.FERRY_DATABASE_URL) : undefined,
    });
    try {
      return (await db.kysely.selectFrom('workspaces').select('id').executeTakeFirstOrThrow()).id;
    } finally {
      await db.close();
    }
  })();
  console.log('\n| GET /v1/jobs/{id}, one request at a time (500, after 50 to warm up) | mean ms | p99 ms |');
  console.log('|---|---:|---:|');
  for (const objects of [1000, 100_000]) {
    const id = await seedJob(workspace, objects);
    const times: number[] = [];
    for (let i = 0; i < 550; i++) {
      const started = performance.now();
      const res = await fetch(`${base}/v1/jobs/${id}`, { headers: auth });
      const body = (await res.json()) as { counts?: { total: number } };
      if (res.status !== 200 || body.counts?.total !== objects)
        throw new Error(`job read: ${res.status} ${JSON.stringify(body)}`);
      if (i >= 50) times.push(performance.now() - started); // the first 50 warm up
    }
    times.sort((a, b) => a - b);
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    const p99 = times[Math.floor(times.length * 0.99)] ?? Number.NaN;
    console.log(`| ${objects.toLocaleString('en')} objects | ${mean.toFixed(2)} | ${p99.toFixed(2)} |`);
  }
} finally {
  bare?.kill('SIGTERM');
  server.kill('SIGTERM');
  await new Promise((r) => server.on('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
  if (schema) {
    const c = new pg.Client({
      connectionString: process.env.FERRY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    });
    await c.connect();
    await c.query(`drop schema ${schema} cascade`);
    await c.end();
  }
}
