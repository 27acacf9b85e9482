// bench/scale (figures in docs/performance.md, "Cost as work grows"): does a bulk copy cost the same per
// object at 1,000, 10,000 and 100,000 objects? Prefix copy jobs of N small objects (1 KiB, so that the
// count and not the bytes is measured), S3 → S3 (two s3 locations on one s3rver: server-side copies) and
// S3 → Azure (azurite: streamed), beside `rclone copy` with the flags of bench/transfer, printing for
// each size and tool the time, objects/s, the ratio to the same tool's rate at the smallest size and to
// rclone, ferry's peak RSS (the server's VmHWM during the run) and ferry's database size after the run.
// Then, on PostgreSQL, one API process (FERRY_ROLE=api) and 1, 2 and 4 worker processes (FERRY_ROLE=
// worker) on one fresh schema each, the same job at `--postgres-objects`: objects/s and the ratio to one
// worker. With --verify (default: checksum and download), the first run of each size is followed by a
// verify job of the copy (`POST /v1/verify`) in each mode, beside `rclone check` (and `--download`):
// the time and peak RSS of comparing N objects, which should not grow with N either (issue 37: a verify
// streams both listings, 100,000 objects at flat memory).
//
// Everything runs on 127.0.0.1 as in bench/transfer (bench/support/processes.ts, bench/transfer/*.ts):
// s3rver in its own process, azurite in its own, ferry the built server. Each source bucket holds its N
// objects in folders of 1,000 (s3rver reads a whole directory for each listing page, so one flat folder
// of 100,000 keys would make its listing, not the tools, the cost). Every (kind, size) gets a fresh
// ferry server with one warm-up job of 200 objects, then `--runs` measured runs of each tool into a fresh
// bucket or container, counted afterwards (objects and bytes) and removed. S3 → Azure gets a fresh
// azurite for each size and each PostgreSQL setting (its in-memory store slows with what it has held).
//   npm run bench:scale [-- --sizes 1000,10000,100000 --only s3,azure --tools ferry,rclone
//                          --runs 3 --large-runs 1 --azure-max 10000 --postgres-workers 1,2,4
//                          --postgres-objects 10000 --verify checksum,download --skip-build
//                          --cpu-prof DIR]
// --runs: runs of each tool below 100,000 objects (median shown); --large-runs: from 100,000 on.
// --azure-max: S3 → Azure sizes above it are left out (azurite's per-blob cost grows with the blobs it
// holds: bench/scale/azurite.ts measures that alone).
// --postgres-workers '' leaves out the PostgreSQL part; --sizes '' leaves out the SQLite part.
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startAzurite } from '../../test/support/azurite.js';
import { createSchema, PG_URL } from '../../test/support/databases.js';
import { loadAverage, median } from '../support/figures.js';
import { cpuOf, mib } from '../support/proc.js';
import {
  buildDist,
  type FerryProcess,
  type FerryWorker,
  startFerry,
  startFerryWorker,
  startS3rverProcess,
} from '../support/processes.js';
import { seedBucket, seedClient } from '../support/s3.js';
import {
  azureHolds,
  azureService,
  check,
  createBucket,
  type DataSet,
  removeBucket,
  s3Holds,
} from '../transfer/data.js';
import { createLocations, type Locations, prefixCopy, prefixVerify } from '../transfer/ferry.js';
import { CONCURRENCY, Rclone, type ToolRun } from '../transfer/peers.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000,100000' },
    only: { type: 'string', default: 's3,azure' },
    tools: { type: 'string', default: 'ferry,rclone' },
    runs: { type: 'string', default: '3' },
    'large-runs': { type: 'string', default: '1' },
    'azure-max': { type: 'string', default: '10000' },
    'postgres-workers': { type: 'string', default: '1,2,4' },
    'postgres-objects': { type: 'string', default: '10000' },
    'object-size': { type: 'string', default: '1024' },
    verify: { type: 'string', default: 'checksum,download' },
    'skip-build': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
  },
});
const numbers = (list: string) => list.split(',').filter(Boolean).map(Number);
const SIZES = numbers(values.sizes);
const KINDS = values.only.split(',').filter((k): k is Kind => k === 's3' || k === 'azure');
const RUNS = Number(values.runs);
const LARGE_RUNS = Number(values['large-runs']);
/** Runs of each tool at n objects: `--runs`, or `--large-runs` from 100,000 objects on. */
const runsOf = (n: number) => (n >= 100_000 ? LARGE_RUNS : RUNS);
const AZURE_MAX = Number(values['azure-max']);
const PG_WORKERS = numbers(values['postgres-workers']);
const PG_OBJECTS = Number(values['postgres-objects']);
const OBJECT_SIZE = Number(values['object-size']);
const VERIFY_MODES = values.verify
  .split(',')
  .filter((m): m is 'checksum' | 'download' => m === 'checksum' || m === 'download');
/** The verify rows: ferry's job in each mode, and rclone's command that does the same. */
const VERIFY_TOOLS = VERIFY_MODES.map((mode) => ({
  mode,
  ferry: `ferry verify ${mode}`,
  rclone: mode === 'download' ? 'rclone check --download' : 'rclone check',
}));
const WARM = 200;
const cpuProf = values['cpu-prof'];
const tools = values.tools.split(',').filter((name) => {
  if (name !== 'rclone' || existsSync('/usr/bin/rclone')) return true;
  console.log('/usr/bin/rclone is missing (Debian: apt-get install rclone); rclone is left out');
  return false;
});

type Kind = 's3' | 'azure';
const KIND_TITLE: Record<Kind, string> = {
  s3: 'S3 → S3 on one s3rver (server-side copies)',
  azure: 'S3 (s3rver) → Azure (azurite), streamed through the tool',
};

const secs = (since: number) => (performance.now() - since) / 1000;
const print = (line = '') => console.log(line);
const count = (n: number) => n.toLocaleString('en');

console.log(`load average before: ${loadAverage()}; ${cpus().length} cores`);
const benchStarted = performance.now();
if (!values['skip-build']) buildDist();

const [s3, firstAzurite] = await Promise.all([startS3rverProcess(), startAzurite()]);
const client = seedClient(s3.endpoint);
let azurite = firstAzurite;
let azure = azureService(azurite.endpoint);
let rclone = new Rclone({ s3: s3.endpoint, azure: azurite.endpoint });

/**
 * A fresh azurite for each S3 → Azure size and setting: azurite's in-memory store gets slower with what
 * it has held (the deleted containers of earlier runs too), which would count against whoever ran later.
 */
async function freshAzurite(): Promise<void> {
  await azurite.close();
  azurite = await startAzurite();
  azure = azureService(azurite.endpoint);
  rclone = new Rclone({ s3: s3.endpoint, azure: azurite.endpoint });
}

const sourceBucket = (n: number) => `scale-src-${n}`;
const dataSet = (n: number): DataSet => ({ objects: n, bytes: n * OBJECT_SIZE });
/** N keys in folders of 1,000: f000/o000000.bin … */
const keysOf = (n: number) =>
  Array.from(
    { length: n },
    (_, i) => `f${String(Math.floor(i / 1000)).padStart(3, '0')}/o${String(i).padStart(6, '0')}.bin`,
  );
/** Each object's body: its key padded to OBJECT_SIZE bytes (ASCII), so the bytes are known. */
const body = (key: string) => key.padEnd(OBJECT_SIZE, '.');

async function seed(n: number): Promise<void> {
  const started = performance.now();
  await seedBucket(s3.endpoint, sourceBucket(n), keysOf(n), { concurrency: 64, body });
  const seeded = secs(started);
  check(`seeding ${sourceBucket(n)}`, await s3Holds(client, sourceBucket(n)), dataSet(n));
  console.log(
    `seeded ${sourceBucket(n)}: ${count(n)} × ${OBJECT_SIZE} B in ${seeded.toFixed(1)} s (${(n / seeded).toFixed(0)} PUTs/s, 64 at a time), listed and counted in ${(secs(started) - seeded).toFixed(1)} s`,
  );
}

interface Sample extends ToolRun {
  /** ferry: its database after the run (bytes), and what it is. */
  dbBytes?: number;
  workerCpuSeconds?: number;
}

/** One measured run into a fresh bucket or container, counted, then removed. */
async function measure(kind: Kind, dest: string, n: number, work: () => Promise<Sample>): Promise<Sample> {
  if (kind === 's3') await createBucket(client, dest);
  else await azure.createContainer(dest);
  const sample = await work();
  const counted = performance.now();
  check(dest, kind === 's3' ? await s3Holds(client, dest) : await azureHolds(azure, dest), dataSet(n));
  const countSeconds = secs(counted);
  if (kind === 's3') await removeBucket(client, dest);
  else await azure.deleteContainer(dest);
  if (n >= 10_000) console.log(`  (${dest}: counted in ${countSeconds.toFixed(1)} s, removed)`);
  return sample;
}

const FERRY_ENV = {
  FERRY_EGRESS_ALLOW: '127.0.0.1/32',
  FERRY_LOG_LEVEL: 'warn',
  FERRY_WORKER_CONCURRENCY: String(CONCURRENCY),
  FERRY_LOCATION_CONCURRENCY: String(CONCURRENCY),
};
const nodeArgs = (tag: string) =>
  cpuProf ? ['--cpu-prof', '--cpu-prof-dir', join(cpuProf, tag)] : ([] as string[]);

function ferryRun(ferry: FerryProcess, loc: Locations, kind: Kind, n: number, dest: string) {
  const to = kind === 's3' ? `${loc.s3b}:${dest}/` : `${loc.az}:${dest}/`;
  return prefixCopy(ferry, `${loc.s3a}:${sourceBucket(n)}/`, to, n);
}

/** The warm-up job, not counted: loads ferry's code and brings s3rver's files into the page cache. */
async function warm(ferry: FerryProcess, loc: Locations, kind: Kind, tag: string): Promise<void> {
  const dest = `warm-${tag}`;
  await measure(kind, dest, WARM, () => ferryRun(ferry, loc, kind, WARM, dest));
}

/** ferry's SQLite files after a run: ferry.db and ferry.db-wal (the WAL may not be checkpointed yet). */
function sqliteBytes(dataDir: string): { db: number; wal: number } {
  const size = (name: string) => {
    const path = join(dataDir, name);
    return existsSync(path) ? statSync(path).size : 0;
  };
  return { db: size('ferry.db'), wal: size('ferry.db-wal') };
}

interface Row {
  n: number;
  tool: string;
  samples: Sample[];
  dbNote?: string;
  /** The tool of the row this one is compared with (÷ rclone): rclone's own for a verify. */
  peer?: string;
}

async function sqliteSize(kind: Kind, n: number): Promise<Row[]> {
  const rows: Row[] = [];
  if (kind === 'azure') await freshAzurite();
  if (tools.includes('ferry')) {
    const ferry = await startFerry({ env: FERRY_ENV, nodeArgs: nodeArgs(`${kind}-${n}`) });
    try {
      const loc = await createLocations(ferry, s3.endpoint, azurite.endpoint);
      await warm(ferry, loc, kind, `${kind}-${n}`);
      const samples: Sample[] = [];
      let note = '';
      for (let r = 1; r <= runsOf(n); r++) {
        const dest = `${kind}-${n}-ferry-${r}`;
        samples.push(
          await measure(kind, dest, n, async () => {
            const run = await ferryRun(ferry, loc, kind, n, dest);
            const files = sqliteBytes(ferry.dataDir);
            note = `${mib(files.db)} + WAL ${mib(files.wal)}`;
            // The first run's copy verified in each mode, before it is counted and removed.
            for (const v of r === 1 ? VERIFY_TOOLS : []) {
              const to = kind === 's3' ? `${loc.s3b}:${dest}/` : `${loc.az}:${dest}/`;
              const sample = await prefixVerify(ferry, `${loc.s3a}:${sourceBucket(n)}/`, to, v.mode, n);
              rows.push({ n, tool: v.ferry, samples: [sample], peer: v.rclone });
              console.log(
                `  ${v.ferry} ${kind} ${count(n)}: ${sample.seconds.toFixed(2)} s, peak RSS ${mib(sample.peakBytes)}`,
              );
            }
            return { ...run, dbBytes: files.db + files.wal };
          }),
        );
        console.log(
          `  ferry ${kind} ${count(n)} run ${r}: ${samples.at(-1)?.seconds.toFixed(2)} s, ${(n / (samples.at(-1)?.seconds ?? 1)).toFixed(0)} objects/s, peak RSS ${mib(samples.at(-1)?.peakBytes ?? 0)}, database ${note}`,
        );
      }
      rows.push({ n, tool: 'ferry', samples, dbNote: note });
    } finally {
      await ferry.close();
    }
  }
  if (tools.includes('rclone')) {
    const samples: Sample[] = [];
    for (let r = 1; r <= runsOf(n); r++) {
      const dest = `${kind}-${n}-rclone-${r}`;
      const to = kind === 's3' ? `S3:${dest}` : `AZ:${dest}`;
      samples.push(
        await measure(kind, dest, n, async () => {
          const run = await rclone.copy(`S3:${sourceBucket(n)}`, to);
          for (const v of r === 1 ? VERIFY_TOOLS : []) {
            const flags = v.mode === 'download' ? ['--download'] : [];
            const sample = await rclone.run([
              'check',
              `S3:${sourceBucket(n)}`,
              to,
              '--checkers',
              String(CONCURRENCY),
              ...flags,
              '-q',
            ]);
            rows.push({ n, tool: v.rclone, samples: [sample] });
            console.log(
              `  ${v.rclone} ${kind} ${count(n)}: ${sample.seconds.toFixed(2)} s, peak RSS ${mib(sample.peakBytes)}`,
            );
          }
          return run;
        }),
      );
      console.log(
        `  rclone ${kind} ${count(n)} run ${r}: ${samples.at(-1)?.seconds.toFixed(2)} s, ${(n / (samples.at(-1)?.seconds ?? 1)).toFixed(0)} objects/s, peak RSS ${mib(samples.at(-1)?.peakBytes ?? 0)}`,
      );
    }
    rows.push({ n, tool: 'rclone', samples });
  }
  return rows;
}

const rateOf = (row: Row | undefined) =>
  row ? row.n / median(row.samples.map((s) => s.seconds)) : Number.NaN;

function sqliteTable(kind: Kind, rows: Row[]): void {
  print();
  print(
    `${KIND_TITLE[kind]}: ${OBJECT_SIZE} B objects; SQLite, one ferry process (API and worker), a fresh server per size; median of ${RUNS} run(s), ${LARGE_RUNS} from 100,000 objects on`,
  );
  print();
  print(
    '| objects | tool | time | objects/s | ÷ own rate at the smallest size | ÷ rclone | peak RSS (before the run) | CPU of the tool | database after the run |',
  );
  print('|---:|---|---:|---:|---:|---:|---:|---:|---|');
  const smallest = Math.min(...rows.map((r) => r.n));
  for (const row of rows) {
    const rate = rateOf(row);
    const base = rateOf(rows.find((r) => r.n === smallest && r.tool === row.tool));
    const peer = rateOf(rows.find((r) => r.n === row.n && r.tool === (row.peer ?? 'rclone')));
    const peak = Math.max(...row.samples.map((s) => s.peakBytes));
    const before = row.samples.flatMap((s) => (s.rssBeforeBytes === undefined ? [] : [s.rssBeforeBytes]));
    const memory = before.length > 0 ? `${mib(peak)} (${mib(Math.min(...before))})` : mib(peak);
    const times = row.samples.map((s) => s.seconds.toFixed(2)).join(', ');
    print(
      `| ${count(row.n)} | ${row.tool} | ${times} s | ${rate.toFixed(0)} | ${(rate / base).toFixed(2)} | ${Number.isNaN(peer) ? '—' : (rate / peer).toFixed(2)} | ${memory} | ${median(row.samples.map((s) => s.cpuSeconds)).toFixed(1)} s | ${row.dbNote ?? '—'} |`,
    );
  }
  for (const tool of ['ferry', ...VERIFY_TOOLS.map((v) => v.ferry)]) {
    const ferryRows = rows.filter((r) => r.tool === tool);
    const small = ferryRows.find((r) => r.n === smallest);
    const large = ferryRows.find((r) => r.n === Math.max(...ferryRows.map((r) => r.n)));
    if (!small || !large || small === large) continue;
    const ratio = rateOf(large) / rateOf(small);
    print();
    print(
      `${ratio >= 0.9 ? 'PASS' : 'FAIL'} ${kind}: ${tool}'s objects/s at ${count(large.n)} is ${ratio.toFixed(2)} × its rate at ${count(small.n)} (goal ≥ 0.9)`,
    );
    const peak = (row: Row) => Math.max(...row.samples.map((s) => s.peakBytes));
    const growth = peak(large) / peak(small);
    print(
      `${growth <= 1.25 ? 'PASS' : 'FAIL'} ${kind}: ${tool}'s peak RSS at ${count(large.n)} is ${mib(peak(large))}, ${growth.toFixed(2)} × its ${mib(peak(small))} at ${count(small.n)} (goal: does not grow with the count; ≤ 1.25 ×)`,
    );
  }
}

/** The size of every table of `schema` with its indexes and TOAST (pg_total_relation_size). */
async function schemaBytes(schema: string): Promise<number> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    const { rows } = await c.query<{ bytes: string }>(
      `select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as bytes
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = $1 and c.relkind in ('r', 'p', 'm')`,
      [schema],
    );
    return Number(rows[0]?.bytes ?? 0);
  } finally {
    await c.end();
  }
}

interface PgResult {
  workers: number;
  sample: Sample;
}

async function postgresRun(kind: Kind, workers: number): Promise<PgResult> {
  if (kind === 'azure') await freshAzurite();
  const db = await createSchema();
  const env = {
    ...FERRY_ENV,
    FERRY_DATABASE_URL: db.url,
    FERRY_MASTER_KEY: randomBytes(32).toString('base64'),
  };
  const tag = `pg-${kind}-${workers}`;
  const api = await startFerry({ env: { ...env, FERRY_ROLE: 'api' }, nodeArgs: nodeArgs(`${tag}-api`) });
  const started: FerryWorker[] = [];
  try {
    for (let w = 0; w < workers; w++)
      started.push(
        await startFerryWorker({ ...env, FERRY_DATA_DIR: api.dataDir }, nodeArgs(`${tag}-worker${w}`)),
      );
    const loc = await createLocations(api, s3.endpoint, azurite.endpoint);
    await warm(api, loc, kind, tag);
    const dest = `${tag}-run`;
    const cpu0 = await Promise.all(started.map((w) => cpuOf(w.pid)));
    const sample = await measure(kind, dest, PG_OBJECTS, async () => {
      const run = await ferryRun(api, loc, kind, PG_OBJECTS, dest);
      const cpu1 = await Promise.all(started.map((w) => cpuOf(w.pid)));
      return {
        ...run,
        workerCpuSeconds: cpu1.reduce((a, b, i) => a + b - (cpu0[i] as number), 0),
        dbBytes: await schemaBytes(db.schema),
      };
    });
    console.log(
      `  PostgreSQL ${kind}, ${workers} worker(s): ${sample.seconds.toFixed(2)} s, ${(PG_OBJECTS / sample.seconds).toFixed(0)} objects/s`,
    );
    return { workers, sample };
  } finally {
    for (const w of started) await w.close();
    await api.close();
    await db.drop();
  }
}

function postgresTable(kind: Kind, results: PgResult[]): void {
  const one = results.find((r) => r.workers === 1);
  const rate = (r: PgResult) => PG_OBJECTS / r.sample.seconds;
  print();
  print(
    `${KIND_TITLE[kind]}, ${count(PG_OBJECTS)} × ${OBJECT_SIZE} B; PostgreSQL (fresh schema each), one API process (FERRY_ROLE=api) + N worker processes (FERRY_ROLE=worker, ${CONCURRENCY} objects at once each); ${cpus().length} cores; one run each`,
  );
  print();
  print(
    '| worker processes | time | objects/s | ÷ 1 worker | CPU of the workers | CPU of the API process | schema size after the run (pg_total_relation_size of its tables) |',
  );
  print('|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results)
    print(
      `| ${r.workers} | ${r.sample.seconds.toFixed(2)} s | ${rate(r).toFixed(0)} | ${one ? (rate(r) / rate(one)).toFixed(2) : '—'} | ${r.sample.workerCpuSeconds?.toFixed(1)} s | ${r.sample.cpuSeconds.toFixed(1)} s | ${mib(r.sample.dbBytes ?? 0)} |`,
    );
}

try {
  const seedSizes = [...new Set([WARM, ...SIZES, ...(PG_WORKERS.length > 0 ? [PG_OBJECTS] : [])])];
  for (const n of seedSizes.sort((a, b) => a - b)) await seed(n);
  const tables: Array<() => void> = [];
  for (const kind of KINDS) {
    if (SIZES.length === 0) break;
    const started = performance.now();
    const rows: Row[] = [];
    for (const n of SIZES) {
      if (kind === 'azure' && n > AZURE_MAX) {
        console.log(
          `azure ${count(n)}: left out (--azure-max ${AZURE_MAX}): azurite's in-memory store costs more per blob the more blobs it holds (bench/scale/azurite.ts), so its own time grows with the square of the count`,
        );
        continue;
      }
      rows.push(...(await sqliteSize(kind, n)));
    }
    sqliteTable(kind, rows);
    console.log(`(${kind} took ${secs(started).toFixed(0)} s; every destination counted: objects and bytes)`);
    tables.push(() => sqliteTable(kind, rows));
  }
  for (const kind of KINDS) {
    if (PG_WORKERS.length === 0) break;
    const results: PgResult[] = [];
    for (const workers of PG_WORKERS) results.push(await postgresRun(kind, workers));
    postgresTable(kind, results);
    tables.push(() => postgresTable(kind, results));
  }
  print();
  print('All tables again:');
  for (const table of tables) table();
  print();
  print(
    `node ${process.version}, ${rclone.binary}; ferry FERRY_WORKER_CONCURRENCY = FERRY_LOCATION_CONCURRENCY = ${CONCURRENCY}, rclone --transfers ${CONCURRENCY} --checkers ${CONCURRENCY}; ${cpus().length} cores; load average after: ${loadAverage()}; whole bench ${secs(benchStarted).toFixed(0)} s`,
  );
} finally {
  client.destroy();
  await Promise.all([s3.close(), azurite.close()]);
}
