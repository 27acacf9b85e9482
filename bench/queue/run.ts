// bench/queue: is the queue ever the bottleneck? One job of N objects is run by ferry's worker against a
// store that answers at once (bench/queue/worker.ts), with one and two worker processes, on SQLite and
// on PostgreSQL: objects claimed, run and settled per second, and SQL statements per object. Each
// setting runs `--runs` times (interleaved); the median is printed beside each run. The goal (issue
// "Performance"): at least 2,000 objects per second with one process on PostgreSQL.
//   npm run bench:queue [-- --objects 10000 --runs 3 --concurrency 16]
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { systemClock } from '../../src/clock.js';
import { type Db, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import * as jobs from '../../src/lifecycle/jobs.js';
import { keyHash } from '../../src/lifecycle/object-planning.js';
import { Secret } from '../../src/secret.js';
import { median } from '../support/figures.js';
import { root } from '../support/processes.js';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '16' },
  },
});
const OBJECTS = Number(values.objects);
const RUNS = Number(values.runs);
const PG_URL = process.env.FERRY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Target {
  env: Record<string, string>;
  open(): Db;
  drop(): Promise<void>;
}

async function sqliteTarget(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-bench-queue-'));
  return {
    env: { BENCH_DATA_DIR: dir },
    open: () => openDatabase({ dataDir: dir, databaseUrl: undefined }),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function postgresTarget(): Promise<Target> {
  const schema = `ferry_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return {
    env: { BENCH_DATABASE_URL: url },
    open: () => openDatabase({ dataDir: '', databaseUrl: new Secret(url) }),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}

/** A workspace and a fully planned job of OBJECTS objects, written through the lifecycle. */
async function seed(db: Db): Promise<string> {
  await migrateToLatest(db);
  const now = Date.now();
  const workspace = await ensureWorkspace(db.kysely, 'bench', systemClock);
  const location = randomUUID();
  const source = JSON.stringify({ location_id: location, path: 'bucket/from/' });
  const destination = JSON.stringify({ location_id: location, path: 'bucket/to/' });
  const { job_id } = await jobs.create(
    db.kysely,
    {
      id: randomUUID(),
      workspaceId: workspace.id,
      source,
      destination,
      overwrite: 'always',
      manifest: undefined,
    },
    now,
  );
  await db.kysely.updateTable('jobs').set({ lease_owner: 'seed' }).where('id', '=', job_id).execute();
  for (let from = 0; from < OBJECTS; from += 1000) {
    const batch = Array.from({ length: Math.min(1000, OBJECTS - from) }, (_, i) => {
      const key = `object-${from + i}`;
      return { key, keyHash: keyHash(key), size: 4096, etag: null };
    });
    await jobs.commitBatch(db.kysely, 'seed', job_id, from, batch, now);
  }
  await jobs.planningDone(db.kysely, 'seed', job_id, now);
  return job_id;
}

function startWorker(env: Record<string, string>): Promise<{ child: ChildProcess; done: Promise<number> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bench/queue/worker.ts')], {
    env: { ...process.env, ...env, BENCH_CONCURRENCY: values.concurrency },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  let statements: (n: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    statements = resolve;
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready`)));
    lines.on('line', (line) => {
      if (line === 'ready') resolve({ child, done });
      else if (line.startsWith('{')) statements(JSON.parse(line).statements as number);
    });
  });
}

interface Result {
  seconds: number;
  perSecond: number;
  statementsPerObject: number;
}

async function once(dialect: 'sqlite' | 'postgres', processes: number): Promise<Result> {
  const target = dialect === 'sqlite' ? await sqliteTarget() : await postgresTarget();
  const db = target.open();
  const workers: Array<{ child: ChildProcess; done: Promise<number> }> = [];
  try {
    const jobId = await seed(db);
    workers.push(...(await Promise.all(Array.from({ length: processes }, () => startWorker(target.env)))));
    const started = performance.now();
    for (const w of workers) w.child.stdin?.write('go\n');
    for (;;) {
      const job = await db.kysely
        .selectFrom('jobs')
        .select('status')
        .where('id', '=', jobId)
        .executeTakeFirst();
      if (job?.status === 'complete') break;
      if (job?.status !== 'running') {
        const failed = await db.kysely
          .selectFrom('job_objects')
          .select('error')
          .where('job_id', '=', jobId)
          .where('status', '=', 'failed')
          .executeTakeFirst();
        throw new Error(`the job ended ${job?.status}: ${failed?.error}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    const seconds = (performance.now() - started) / 1000;
    for (const w of workers) w.child.kill('SIGTERM');
    const statements = (await Promise.all(workers.map((w) => w.done))).reduce((a, b) => a + b, 0);
    return { seconds, perSecond: OBJECTS / seconds, statementsPerObject: statements / OBJECTS };
  } finally {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGTERM');
    await db.close();
    await target.drop();
  }
}

const only = process.env.BENCH_ONLY; // e.g. "sqlite x2", to look at one setting
const settings = (
  [
    ['postgres', 1],
    ['postgres', 2],
    ['sqlite', 1],
    ['sqlite', 2],
  ] as Array<['sqlite' | 'postgres', number]>
).filter(([d, p]) => !only || only === `${d} x${p}`);
const results = new Map<string, Result[]>(settings.map(([d, p]) => [`${d} x${p}`, []]));
for (let run = 0; run < RUNS; run++) {
  for (const [dialect, processes] of settings) {
    const result = await once(dialect, processes);
    results.get(`${dialect} x${processes}`)?.push(result);
    console.log(
      `run ${run + 1} ${dialect} ${processes} process(es): ${result.perSecond.toFixed(0)} objects/s (${result.seconds.toFixed(2)} s), ${result.statementsPerObject.toFixed(2)} statements/object`,
    );
  }
}

console.log(`\n${OBJECTS} objects, worker concurrency ${values.concurrency}, median of ${RUNS}:`);
console.log('| database | worker processes | objects/s | statements/object | vs goal 2,000/s |');
console.log('|---|---|---|---|---|');
for (const [name, list] of results) {
  const [dialect, processes] = name.split(' x');
  const rate = median(list.map((r) => r.perSecond));
  console.log(
    `| ${dialect} | ${processes} | ${rate.toFixed(0)} | ${median(list.map((r) => r.statementsPerObject)).toFixed(2)} | ${(rate / 2000).toFixed(2)} x |`,
  );
}
