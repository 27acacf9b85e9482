// bench/wake: how soon an accepted copy starts on an idle worker, and what an idle server costs.
// On SQLite one process (API and worker, woken in-process); on PostgreSQL an API process and a worker
// process (woken across processes by NOTIFY). Each copy is accepted at a random moment (300 to 1,300
// ms after the last), so no poll lines up with it; "accepted → started" is the transfer's created_at
// (stamped by the API process) to its started_at (stamped by the worker when it claims it), both read
// from the database afterwards. Idle cost: the CPU the server processes use over 10 s with nothing to
// do. The goal (issue "Performance"): at most 50 ms on both databases, with no polling storm when idle.
//   npm run bench:wake [-- --copies 15]
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { cpuOf } from '../support/proc.js';
import {
  buildDist,
  type FerryProcess,
  startFerry,
  startFerryWorker,
  startS3rverProcess,
} from '../support/processes.js';
import { seedBucket } from '../support/s3.js';

const { values } = parseArgs({
  options: { copies: { type: 'string', default: '15' }, 'skip-build': { type: 'boolean', default: false } },
});
const COPIES = Number(values.copies);
const PG_URL = process.env.FERRY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function copyAndWait(ferry: FerryProcess, body: unknown): Promise<string> {
  const res = await ferry.post('/v1/copy', body);
  if (res.status !== 202) throw new Error(`copy: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

async function waitDone(ferry: FerryProcess, id: string): Promise<void> {
  for (;;) {
    const res = await fetch(`${ferry.base}/v1/transfers/${id}`, {
      headers: { authorization: `Bearer ${ferry.key}` },
    });
    const view = (await res.json()) as { status: string; error?: string };
    if (view.status === 'complete') return;
    if (['failed', 'canceled'].includes(view.status))
      throw new Error(`transfer ${id} ${view.status}: ${view.error}`);
    await sleep(20);
  }
}

interface Result {
  database: string;
  latencies: number[];
  idleCpuMsPerSecond: number;
}

async function run(database: 'SQLite' | 'PostgreSQL', s3: string): Promise<Result> {
  let schema: string | undefined;
  const env: Record<string, string> = {
    FERRY_MASTER_KEY: randomBytes(32).toString('base64'),
    FERRY_EGRESS_ALLOW: '127.0.0.1/32', // s3rver on loopback
  };
  if (database === 'PostgreSQL') {
    schema = `ferry_bench_${randomBytes(5).toString('hex')}`;
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`create schema ${schema}`);
    await c.end();
    env.FERRY_DATABASE_URL = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    env.FERRY_ROLE = 'api';
  }
  const api = await startFerry({ env });
  const worker = schema ? await startFerryWorker({ ...env, FERRY_DATA_DIR: api.dataDir }) : undefined;
  try {
    const secret = { access_key_id: 'bench', secret_access_key: 'bench' };
    for (const label of ['src', 'dst']) {
      const res = await api.post('/v1/locations', {
        provider: 's3',
        label,
        secret,
        metadata: { endpoint: s3 },
      });
      if (res.status !== 201) throw new Error(`location: ${res.status} ${await res.text()}`);
    }
    const copy = (i: number | string) => ({ from: 'src:wake/object', to: `dst:wake/copies/${i}` });
    await waitDone(api, await copyAndWait(api, copy('warm-up')));

    // Idle: what the server processes spend doing nothing for 10 s.
    const pids = [api.pid, ...(worker ? [worker.pid] : [])];
    await sleep(2000);
    const cpu0 = (await Promise.all(pids.map(cpuOf))).reduce((a, b) => a + b, 0);
    await sleep(10_000);
    const cpu1 = (await Promise.all(pids.map(cpuOf))).reduce((a, b) => a + b, 0);

    const ids: string[] = [];
    for (let i = 0; i < COPIES; i++) {
      await sleep(300 + Math.random() * 1000);
      const id = await copyAndWait(api, copy(i));
      await waitDone(api, id);
      ids.push(id);
    }
    const rows = await readTimes(database, api, env.FERRY_DATABASE_URL, ids);
    return {
      database,
      latencies: rows.map((r) => Number(r.started_at) - Number(r.created_at)),
      idleCpuMsPerSecond: ((cpu1 - cpu0) * 1000) / 10,
    };
  } finally {
    await worker?.close();
    await api.close();
    if (schema) {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
    }
  }
}

async function readTimes(
  database: string,
  api: FerryProcess,
  url: string | undefined,
  ids: string[],
): Promise<{ created_at: number; started_at: number }[]> {
  const query = `select created_at, started_at from transfers where id in (${ids.map((_, i) => (database === 'SQLite' ? '?' : `$${i + 1}`)).join(',')})`;
  if (database === 'SQLite') {
    const db = new SQLite(join(api.dataDir, 'ferry.db'), { readonly: true });
    try {
      return db.prepare(query).all(...ids) as { created_at: number; started_at: number }[];
    } finally {
      db.close();
    }
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(query, ids)).rows;
  } finally {
    await c.end();
  }
}

if (!values['skip-build']) buildDist();
const s3 = await startS3rverProcess();
try {
  await seedBucket(s3.endpoint, 'wake', ['object']);
  const results = [await run('SQLite', s3.endpoint), await run('PostgreSQL', s3.endpoint)];
  console.log(
    `\nbench/wake — ${COPIES} single copies each, accepted at random moments; node ${process.version}\n`,
  );
  console.log('| database | accepted → started: median ms | max ms | each (ms) | idle CPU, ms per second |');
  console.log('|---|---:|---:|---|---:|');
  for (const r of results) {
    const sorted = [...r.latencies].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
    console.log(
      `| ${r.database}${r.database === 'PostgreSQL' ? ' (API and worker in two processes)' : ' (one process)'} | ${median} | ${sorted.at(-1)} | ${r.latencies.join(', ')} | ${r.idleCpuMsPerSecond.toFixed(1)} |`,
    );
  }
  console.log('\ngoal: accepted → started ≤ 50 ms on both databases, no polling storm when idle');
} finally {
  await s3.close();
}
