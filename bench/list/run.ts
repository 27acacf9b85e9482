// bench/list (figures in docs/performance.md): a recursive listing of a 10,000-object bucket on
// s3rver through ferry's POST /v1/list (the built server as its own process, reading the whole
// streamed body) against `rclone lsjson -R` (Debian's rclone) on the same bucket, median of 3 runs
// each, in one run of this script; and ferry's peak resident memory during the listing at 10,000 and
// at 2,000 objects, to show it does not grow with the number of entries.
//   npm run bench:list [-- --objects 10000 --small 2000 --runs 3 --skip-build --skip-heads --cpu-prof DIR]
// (--skip-heads leaves out the slow rclone variant that HEADs every object; --cpu-prof DIR profiles
// the ferry server with node --cpu-prof.)
//
// rclone variants (all page 1,000 keys at a time, as ferry does):
// - `--use-server-modtime --no-mimetype --s3-list-version 2`: the fair comparison. The same requests as
//   ferry (ListObjectsV2, no HEADs) and the same information: modTime is the listing's LastModified, no
//   MIME type.
// - `--use-server-modtime --no-mimetype`: the same, with the list version rclone picks itself for
//   provider Other (ListObjects v1, marker paging).
// - `--no-modtime --no-mimetype`: no HEADs either, and no modTime at all (less than ferry answers).
// - default: one HEAD per object for its modification time and MIME type (docs/testing.md).
// s3rver is the bottleneck of every variant, so compare ratios within one run, never absolute times.
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { loadAverage, median } from '../support/figures.js';
import { cpuOf, type Memory, memoryOf, mib, resetPeak, watchProcess } from '../support/proc.js';
import { buildDist, type FerryProcess, startFerry, startS3rverProcess } from '../support/processes.js';
import { seedBucket } from '../support/s3.js';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '10000' },
    small: { type: 'string', default: '2000' },
    runs: { type: 'string', default: '3' },
    'skip-build': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    rclone: { type: 'string', default: '/usr/bin/rclone' },
    'skip-heads': { type: 'boolean', default: false },
  },
});
const sizes = [Number(values.small), Number(values.objects)];
const runs = Number(values.runs);
const RCLONE = values.rclone;

const RCLONE_VARIANTS = [
  {
    label: 'rclone lsjson -R --use-server-modtime --no-mimetype --s3-list-version 2 (fair)',
    flags: ['--use-server-modtime', '--no-mimetype', '--s3-list-version', '2'],
  },
  {
    label: 'rclone lsjson -R --use-server-modtime --no-mimetype',
    flags: ['--use-server-modtime', '--no-mimetype'],
  },
  { label: 'rclone lsjson -R --no-modtime --no-mimetype', flags: ['--no-modtime', '--no-mimetype'] },
  { label: 'rclone lsjson -R (HEAD per object)', flags: [] },
].filter((v) => !values['skip-heads'] || v.flags.length > 0);
const FAIR = RCLONE_VARIANTS[0] as (typeof RCLONE_VARIANTS)[number];

/** Objects in nested folders: 10 top folders x 10 sub-folders, files spread over all of them. */
function keys(count: number): string[] {
  return Array.from(
    { length: count },
    (_, i) => `top-${i % 10}/sub-${Math.floor(i / 10) % 10}/file-${i}.txt`,
  );
}

interface Sample {
  ms: number;
  entries: number;
  /** Peak RSS of the process doing the listing (ferry: during the listing; rclone: its whole life). */
  peakBytes: number;
  /** ferry only: RSS just before the listing. */
  idleBytes?: number;
  /** CPU seconds of the process doing the listing (ferry: the server, during the listing). */
  cpuSeconds: number;
  /** CPU seconds s3rver spent meanwhile. */
  s3rverCpuSeconds: number;
}

async function listFerry(
  ferry: FerryProcess,
  s3rverPid: number,
  locationId: string,
  bucket: string,
): Promise<Sample> {
  await resetPeak(ferry.pid);
  const before: Memory = await memoryOf(ferry.pid);
  const [cpu0, s3cpu0] = await Promise.all([cpuOf(ferry.pid), cpuOf(s3rverPid)]);
  const started = performance.now();
  const res = await ferry.post('/v1/list', { id: locationId, path: bucket, recurse: true });
  const text = await res.text();
  const ms = performance.now() - started;
  const [after, cpu1, s3cpu1] = await Promise.all([memoryOf(ferry.pid), cpuOf(ferry.pid), cpuOf(s3rverPid)]);
  if (res.status !== 200) throw new Error(`/v1/list ${bucket}: ${res.status} ${text.slice(0, 500)}`);
  const entries = (JSON.parse(text) as { entries: unknown[] }).entries.length;
  return {
    ms,
    entries,
    peakBytes: after.peakBytes,
    idleBytes: before.rssBytes,
    cpuSeconds: cpu1 - cpu0,
    s3rverCpuSeconds: s3cpu1 - s3cpu0,
  };
}

async function listRclone(
  endpoint: string,
  s3rverPid: number,
  bucket: string,
  flags: readonly string[],
): Promise<Sample> {
  // Configured by environment only; AWS_CA_BUNDLE breaks rclone's S3 backend (docs/testing.md).
  const { AWS_CA_BUNDLE: _bundle, ...inherited } = process.env;
  const env = {
    ...inherited,
    RCLONE_CONFIG: '/dev/null',
    RCLONE_CONFIG_BENCH_TYPE: 's3',
    RCLONE_CONFIG_BENCH_PROVIDER: 'Other',
    RCLONE_CONFIG_BENCH_ENDPOINT: endpoint,
    RCLONE_CONFIG_BENCH_FORCE_PATH_STYLE: 'true',
    RCLONE_CONFIG_BENCH_ACCESS_KEY_ID: 'bench',
    RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY: 'bench',
  };
  const s3cpu0 = await cpuOf(s3rverPid);
  const started = performance.now();
  const child = spawn(RCLONE, ['lsjson', '-R', ...flags, `bench:${bucket}`], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const watch = watchProcess(child.pid as number);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  const ms = performance.now() - started;
  const { peakBytes, cpuSeconds } = watch.stop();
  const s3cpu1 = await cpuOf(s3rverPid);
  if (code !== 0)
    throw new Error(`rclone ${flags.join(' ')} exited ${code}: ${Buffer.concat(err).toString()}`);
  const entries = (JSON.parse(Buffer.concat(out).toString('utf8')) as unknown[]).length;
  return { ms, entries, peakBytes, cpuSeconds, s3rverCpuSeconds: s3cpu1 - s3cpu0 };
}

console.log(`load average before: ${loadAverage()}`);
if (!values['skip-build']) buildDist();

const s3 = await startS3rverProcess();
let ferry: FerryProcess | undefined;
try {
  for (const size of sizes) {
    const started = performance.now();
    await seedBucket(s3.endpoint, `bench-${size}`, keys(size), { concurrency: 32, body: (k) => `${k}\n` });
    console.log(
      `seeded bench-${size}: ${size} objects in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }

  const cpuProf = values['cpu-prof'];
  ferry = await startFerry({
    env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_LOG_LEVEL: 'warn' },
    nodeArgs: cpuProf ? ['--cpu-prof', '--cpu-prof-dir', cpuProf] : [],
  });
  const created = await ferry.post('/v1/locations', {
    provider: 's3',
    label: 'bench-s3rver',
    secret: { access_key_id: 'bench', secret_access_key: 'bench' },
    metadata: { endpoint: s3.endpoint },
  });
  if (created.status !== 201) throw new Error(`create location: ${created.status} ${await created.text()}`);
  const locationId = ((await created.json()) as { id: string }).id;

  // Warm-up: JIT, connection pools and the page cache of s3rver's files.
  for (const size of sizes) {
    await listFerry(ferry, s3.pid, locationId, `bench-${size}`);
    await listRclone(s3.endpoint, s3.pid, `bench-${size}`, FAIR.flags);
  }

  const results = new Map<string, Sample[]>();
  const record = (label: string, size: number, sample: Sample) => {
    const key = `${label}|${size}`;
    results.set(key, [...(results.get(key) ?? []), sample]);
  };
  for (const size of sizes) {
    const bucket = `bench-${size}`;
    for (let run = 0; run < runs; run++) {
      // Interleaved, so that a noisy moment of the machine falls on every tool alike, and in an order
      // rotated each run, so that no tool always follows the same one (s3rver collects the garbage
      // of one listing during the next; after the HEAD variant that is a lot).
      const order = [undefined, ...RCLONE_VARIANTS];
      for (let i = 0; i < order.length; i++) {
        const variant = order[(i + run) % order.length];
        if (variant === undefined) record('ferry', size, await listFerry(ferry, s3.pid, locationId, bucket));
        else record(variant.label, size, await listRclone(s3.endpoint, s3.pid, bucket, variant.flags));
      }
    }
  }

  const labels = ['ferry', ...RCLONE_VARIANTS.map((v) => v.label)];
  const samplesOf = (label: string, size: number) => results.get(`${label}|${size}`) ?? [];
  const seconds = (x: number) => `${x.toFixed(2)} s`;
  console.log(
    `\nbench/list — s3rver, recursive listing, median of ${runs}, node ${process.version}, load average after: ${loadAverage()}\n`,
  );
  console.log(
    '| tool | objects | entries | median time | ratio to rclone (fair) | CPU of the tool | CPU of s3rver | peak RSS |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const size of sizes) {
    const fair = median(samplesOf(FAIR.label, size).map((s) => s.ms));
    const counts = new Set<number>();
    for (const label of labels) {
      const samples = samplesOf(label, size);
      for (const s of samples) counts.add(s.entries);
      const ms = median(samples.map((s) => s.ms));
      const peak = Math.max(...samples.map((s) => s.peakBytes));
      const memory = label === 'ferry' ? `${mib(peak)} (server process)` : mib(peak);
      const tool = label === 'ferry' ? 'ferry POST /v1/list (recurse)' : label;
      console.log(
        `| ${tool} | ${size.toLocaleString('en')} | ${samples[0]?.entries.toLocaleString('en')} | ${seconds(ms / 1000)} | ${(ms / fair).toFixed(2)} | ${seconds(median(samples.map((s) => s.cpuSeconds)))} | ${seconds(median(samples.map((s) => s.s3rverCpuSeconds)))} | ${memory} |`,
      );
    }
    if (counts.size !== 1)
      throw new Error(`entry counts disagree at ${size} objects: ${[...counts].join(', ')}`);
  }
  console.log('\nentry counts agree: files + folders, every tool, at each size');

  console.log('\nferry server memory during the listing, each run (RSS before → peak during, growth):');
  for (const size of sizes) {
    const runsText = samplesOf('ferry', size)
      .map(
        (s) => `${mib(s.idleBytes ?? 0)} → ${mib(s.peakBytes)} (+${mib(s.peakBytes - (s.idleBytes ?? 0))})`,
      )
      .join('; ');
    console.log(`- ${size.toLocaleString('en')} objects: ${runsText}`);
  }
  console.log('\ntimes of each run:');
  for (const size of sizes) {
    for (const label of labels) {
      const times = samplesOf(label, size).map((s) => (s.ms / 1000).toFixed(2));
      console.log(`- ${size.toLocaleString('en')} ${label}: ${times.join(', ')} s`);
    }
  }
  const big = sizes[sizes.length - 1] as number;
  const ratio =
    median(samplesOf('ferry', big).map((s) => s.ms)) / median(samplesOf(FAIR.label, big).map((s) => s.ms));
  console.log(
    `\nferry / rclone (fair) at ${big.toLocaleString('en')} objects: ${ratio.toFixed(2)} (target ≤ 1.00)`,
  );
} finally {
  await ferry?.close();
  await s3.close();
}
