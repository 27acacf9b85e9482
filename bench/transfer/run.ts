// bench/transfer (figures and targets in docs/performance.md): ferry against `rclone copy` and
// `aws s3 cp --recursive` on local s3rver and azurite, in one run, on the same data:
//   (a) 2,000 × 4 KiB + 20 × 8 MiB, S3 to S3 on one server (server-side copies for every tool);
//   (b) the same data, S3 to Azure (streamed through the tool; aws cannot);
//   (c) one 1 GiB object, S3 to Azure, with the peak memory of each tool;
//   (d) the time from accepting a 100,000-key manifest job to its first object running;
//   (e) (b) and (c) at once: the mixed prefix job and the 1 GiB single copy started together, S3 to
//       Azure, for the peak memory with a large object in the mix.
// s3rver runs in its own process under --openssl-legacy-provider, azurite in its own, ferry is the
// built server (bin/ferry.js serve) on SQLite in a temporary data directory, all on 127.0.0.1; ferry
// is started afresh for each item (and each run of (d)), so that one item's memory does not count in
// the next. Each run of (a)–(c) copies into a fresh bucket or container, is checked afterwards (object
// count and total bytes, listed by this script) and removed. Tools are interleaved within each run so
// that a noisy moment falls on all of them alike; the tables show the median of the runs, after one
// warm-up run of each tool that is not counted.
//   npm run bench:transfer [-- --runs 3 --only a,b,c,d,e --tools ferry,rclone,aws --skip-build
//                              --cpu-prof DIR --manifest-keys 100000 --node-args="--flag …"]
// --node-args: options for the ferry server's node (a V8 heap setting, say), split at spaces.
// s3rver is a bottleneck of every item and shares the two cores with the tool: compare ratios within
// one run, never absolute times across machines.
// To compare ferry with an earlier ferry (what a change to the copy path costs), versus.ts
// (`npm run bench:versus`) runs (a)–(c) and their streamed S3 → S3 counterparts for this build and an
// earlier commit's, side by side in one run.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startAzurite } from '../../test/support/azurite.js';
import { loadAverage, median } from '../support/figures.js';
import { cpuOf, mib } from '../support/proc.js';
import { buildDist, type FerryProcess, startFerry, startS3rverProcess } from '../support/processes.js';
import { seedClient } from '../support/s3.js';
import {
  azureHolds,
  azureService,
  BIG,
  BIG_BUCKET,
  BIG_KEY,
  check,
  createBucket,
  type DataSet,
  LARGE,
  MIXED,
  removeBucket,
  SMALL,
  SOURCE_BUCKET,
  s3Holds,
  seedSource,
  smallKey,
} from './data.js';
import {
  createLocations,
  jobAndSingleCopy,
  type Locations,
  type ManifestLatency,
  manifestLatency,
  prefixCopy,
  singleCopy,
} from './ferry.js';
import { Aws, CONCURRENCY, Rclone, SdkLoop, type ToolRun } from './peers.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    only: { type: 'string', default: 'a,b,c,d,e' },
    tools: { type: 'string', default: 'ferry,rclone,aws,sdk' },
    'manifest-keys': { type: 'string', default: '100000' },
    'skip-build': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    'node-args': { type: 'string', default: '' },
  },
});
const runs = Number(values.runs);
const only = new Set(values.only.split(','));
const toolNames = values.tools.split(',').filter((name) => {
  const binary = { rclone: '/usr/bin/rclone', aws: '/usr/bin/aws' }[name];
  if (binary === undefined || existsSync(binary)) return true;
  const pkg = name === 'aws' ? 'awscli' : name;
  console.log(`${binary} is missing (Debian: apt-get install ${pkg}); ${name} is left out`);
  return false;
});
const manifestKeys = Number(values['manifest-keys']);
const cpuProf = values['cpu-prof'];

const elapsed = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
const print = (line = '') => console.log(line);

interface Sample extends ToolRun {
  s3rverCpuSeconds: number;
  azuriteCpuSeconds: number;
}
interface Tool {
  label: string;
  run: (dest: string) => Promise<ToolRun>;
}
interface Item {
  id: string;
  title: string;
  kind: 's3' | 'azure';
  expected: DataSet;
  tools: Tool[];
  /** Loads ferry's code for this item before anything is measured (besides the warm-up runs). */
  warmFerry?: (dest: string) => Promise<ToolRun>;
}

console.log(`load average before: ${loadAverage()}`);
const benchStarted = performance.now();
if (!values['skip-build']) buildDist();

const [s3, azurite] = await Promise.all([startS3rverProcess(), startAzurite()]);
const client = seedClient(s3.endpoint);
const azure = azureService(azurite.endpoint);
const aws = new Aws(s3.endpoint);
const rclone = new Rclone({ s3: s3.endpoint, azure: azurite.endpoint });
const sdk = new SdkLoop({ s3: s3.endpoint, azure: azurite.endpoint });

/** A fresh ferry server with its three locations, for the length of `work`. */
async function withFerry<T>(work: (ferry: FerryProcess, loc: Locations) => Promise<T>): Promise<T> {
  const ferry = await startFerry({
    env: {
      FERRY_EGRESS_ALLOW: '127.0.0.1/32',
      FERRY_LOG_LEVEL: 'warn',
      FERRY_WORKER_CONCURRENCY: String(CONCURRENCY),
      FERRY_LOCATION_CONCURRENCY: String(CONCURRENCY),
    },
    nodeArgs: [
      ...(cpuProf ? ['--cpu-prof', '--cpu-prof-dir', cpuProf] : []),
      ...values['node-args'].split(' ').filter(Boolean),
    ],
  });
  try {
    return await work(ferry, await createLocations(ferry, s3.endpoint, azurite.endpoint));
  } finally {
    await ferry.close();
  }
}

/** One measured run into a fresh S3 bucket or Azure container, checked, then removed. */
async function measure(
  kind: 's3' | 'azure',
  name: string,
  expected: DataSet,
  work: () => Promise<ToolRun>,
): Promise<Sample> {
  if (kind === 's3') await createBucket(client, name);
  else await azure.createContainer(name);
  const s3cpu0 = await cpuOf(s3.pid);
  const azcpu0 = await cpuOf(azurite.pid);
  const sample = await work();
  const s3rverCpuSeconds = (await cpuOf(s3.pid)) - s3cpu0;
  const azuriteCpuSeconds = (await cpuOf(azurite.pid)) - azcpu0;
  check(name, kind === 's3' ? await s3Holds(client, name) : await azureHolds(azure, name), expected);
  if (kind === 's3') await removeBucket(client, name);
  else await azure.deleteContainer(name);
  return { ...sample, s3rverCpuSeconds, azuriteCpuSeconds };
}

function items(ferry: FerryProcess, loc: Locations): Item[] {
  const rcloneFlags = `--transfers ${CONCURRENCY} --checkers ${CONCURRENCY} --server-side-across-configs`;
  const all: Item[] = [
    {
      id: 'a',
      title: `(a) ${SMALL.count.toLocaleString('en')} × 4 KiB + ${LARGE.count} × 8 MiB, S3 → S3 on one s3rver (server-side copies)`,
      kind: 's3',
      expected: MIXED,
      tools: [
        {
          label: 'ferry (prefix job between two s3 locations on one account)',
          run: (dest) =>
            prefixCopy(ferry, `${loc.s3a}:${SOURCE_BUCKET}/`, `${loc.s3b}:${dest}/`, MIXED.objects),
        },
        {
          label: `rclone copy ${rcloneFlags} (one remote)`,
          run: (dest) => rclone.copy(`S3:${SOURCE_BUCKET}`, `S3:${dest}`),
        },
        {
          label: `aws s3 cp --recursive (max_concurrent_requests ${CONCURRENCY})`,
          run: (dest) => aws.copyRecursive(SOURCE_BUCKET, dest),
        },
        {
          label: `sdk loop: ListObjectsV2, then CopyObject ${CONCURRENCY} at a time (the server's limit)`,
          run: (dest) => sdk.s3Copy(SOURCE_BUCKET, dest),
        },
      ],
    },
    {
      id: 'b',
      title: '(b) the same data, S3 (s3rver) → Azure (azurite), streamed through the tool',
      kind: 'azure',
      expected: MIXED,
      tools: [
        {
          label: 'ferry (prefix job)',
          run: (dest) =>
            prefixCopy(ferry, `${loc.s3a}:${SOURCE_BUCKET}/`, `${loc.az}:${dest}/`, MIXED.objects),
        },
        {
          label: `rclone copy ${rcloneFlags}`,
          run: (dest) => rclone.copy(`S3:${SOURCE_BUCKET}`, `AZ:${dest}`),
        },
        {
          label: `sdk loop: GetObject, then Put Blob or uploadStream, ${CONCURRENCY} at a time`,
          run: (dest) => sdk.s3ToAzure(SOURCE_BUCKET, dest),
        },
      ],
    },
    {
      id: 'c',
      title: '(c) one 1 GiB object, S3 (s3rver) → Azure (azurite), streamed through the tool',
      kind: 'azure',
      expected: BIG,
      tools: [
        {
          label: 'ferry (single copy)',
          run: (dest) =>
            singleCopy(ferry, `${loc.s3a}:${BIG_BUCKET}/${BIG_KEY}`, `${loc.az}:${dest}/${BIG_KEY}`),
        },
        {
          label: `rclone copy ${rcloneFlags}`,
          run: (dest) => rclone.copy(`S3:${BIG_BUCKET}`, `AZ:${dest}`),
        },
      ],
      // The warm-up of (c) copies one 8 MiB object, not a gigabyte.
      warmFerry: (dest) =>
        singleCopy(ferry, `${loc.s3a}:${SOURCE_BUCKET}/large/file-00.bin`, `${loc.az}:${dest}/warm.bin`),
    },
    {
      id: 'e',
      title: '(e) (b) and (c) at once: the mixed data and the 1 GiB object, S3 (s3rver) → Azure (azurite)',
      kind: 'azure',
      expected: { objects: MIXED.objects + BIG.objects, bytes: MIXED.bytes + BIG.bytes },
      tools: [
        {
          label: 'ferry (prefix job and single copy, started together)',
          run: (dest) =>
            jobAndSingleCopy(
              ferry,
              { from: `${loc.s3a}:${SOURCE_BUCKET}/`, to: `${loc.az}:${dest}/`, objects: MIXED.objects },
              { from: `${loc.s3a}:${BIG_BUCKET}/${BIG_KEY}`, to: `${loc.az}:${dest}/big/${BIG_KEY}` },
            ),
        },
        {
          label: `rclone copy ${rcloneFlags}, two at once (time of the later, memory and CPU summed)`,
          run: async (dest) => {
            const [mixed, one] = await Promise.all([
              rclone.copy(`S3:${SOURCE_BUCKET}`, `AZ:${dest}`),
              rclone.copy(`S3:${BIG_BUCKET}`, `AZ:${dest}/big`),
            ]);
            return {
              seconds: Math.max(mixed.seconds, one.seconds),
              peakBytes: mixed.peakBytes + one.peakBytes,
              cpuSeconds: mixed.cpuSeconds + one.cpuSeconds,
            };
          },
        },
      ],
      warmFerry: (dest) =>
        singleCopy(ferry, `${loc.s3a}:${SOURCE_BUCKET}/large/file-00.bin`, `${loc.az}:${dest}/warm.bin`),
    },
  ];
  return all
    .filter((item) => only.has(item.id))
    .map((item) => ({
      ...item,
      tools: item.tools.filter((t) => toolNames.some((n) => t.label.startsWith(n))),
    }));
}

function table(item: Item, samples: Sample[][]): void {
  const medianOf = (prefix: string) => {
    const index = item.tools.findIndex((t) => t.label.startsWith(prefix));
    return index < 0 ? Number.NaN : median((samples[index] as Sample[]).map((s) => s.seconds));
  };
  const rcloneMedian = medianOf('rclone');
  const sdkMedian = medianOf('sdk loop');
  const ratio = (secs: number, to: number) => (Number.isNaN(to) ? '—' : (secs / to).toFixed(2));
  print();
  print(`${item.title}: ${item.expected.objects} objects, ${mib(item.expected.bytes)}; median of ${runs}`);
  print();
  print(
    '| tool | median time | ratio to rclone | ratio to the sdk loop | peak memory | CPU of the tool | CPU of s3rver | CPU of azurite | each run |',
  );
  print('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const [t, tool] of item.tools.entries()) {
    const ss = samples[t] as Sample[];
    const secs = median(ss.map((s) => s.seconds));
    const peak = mib(Math.max(...ss.map((s) => s.peakBytes)));
    const idle = ss.flatMap((s) => (s.rssBeforeBytes === undefined ? [] : [s.rssBeforeBytes]));
    const memory = idle.length > 0 ? `${peak} (server process; ${mib(Math.min(...idle))} before)` : peak;
    print(
      `| ${tool.label} | ${secs.toFixed(2)} s | ${ratio(secs, rcloneMedian)} | ${ratio(secs, sdkMedian)} | ${memory} | ${median(ss.map((s) => s.cpuSeconds)).toFixed(1)} s | ${median(ss.map((s) => s.s3rverCpuSeconds)).toFixed(1)} s | ${median(ss.map((s) => s.azuriteCpuSeconds)).toFixed(1)} s | ${ss.map((s) => s.seconds.toFixed(2)).join(', ')} |`,
    );
  }
}

async function benchItem(id: string): Promise<void> {
  await withFerry(async (ferry, loc) => {
    const item = items(ferry, loc).find((i) => i.id === id);
    if (!item) return;
    const started = performance.now();
    // Warm-up, not counted: loads each tool's code (ferry's JIT and SDK modules, the Python of aws)
    // and brings s3rver's files into the page cache.
    if (item.warmFerry) {
      const warm = item.warmFerry;
      await measure('azure', `warm-${id}`, { objects: 1, bytes: LARGE.size }, () => warm(`warm-${id}`));
    } else {
      for (const [t, tool] of item.tools.entries())
        await measure(item.kind, `warm-${id}-${t}`, item.expected, () => tool.run(`warm-${id}-${t}`));
    }
    const samples = item.tools.map(() => [] as Sample[]);
    for (let r = 1; r <= runs; r++) {
      for (const [t, tool] of item.tools.entries()) {
        const name = `${id}-${t}-run${r}`;
        (samples[t] as Sample[]).push(await measure(item.kind, name, item.expected, () => tool.run(name)));
      }
    }
    table(item, samples);
    console.log(`(${id} took ${elapsed(started)}; every destination checked: object count and bytes)`);
  });
}

async function benchManifest(): Promise<void> {
  const started = performance.now();
  const keys = Array.from({ length: manifestKeys }, (_, i) =>
    i < SMALL.count ? smallKey(i) : `missing/key-${String(i).padStart(6, '0')}.bin`,
  );
  const samples: ManifestLatency[] = [];
  for (let r = 1; r <= runs; r++) {
    const dest = `d-run${r}`;
    await createBucket(client, dest);
    samples.push(
      await withFerry(async (ferry, loc) => {
        // Warm-up: one single copy, so that the job meets a server that has run work before.
        await singleCopy(ferry, `${loc.s3a}:${SOURCE_BUCKET}/${smallKey(0)}`, `${loc.s3b}:${dest}/warm.bin`);
        return manifestLatency(ferry, `${loc.s3a}:${SOURCE_BUCKET}/`, `${loc.s3b}:${dest}/`, keys);
      }),
    );
    await removeBucket(client, dest);
  }
  const ms = (xs: Array<number | undefined>) => {
    const known = xs.filter((x): x is number => x !== undefined);
    return known.length === xs.length ? `${median(known).toFixed(0)} ms` : 'over 60 s';
  };
  print();
  print(
    `(d) a manifest job of ${manifestKeys.toLocaleString('en')} keys (the first ${SMALL.count.toLocaleString('en')} name real 4 KiB objects, the rest missing objects), S3 → S3; median of ${runs}, a fresh server each`,
  );
  print();
  print('| measure | median | each run |');
  print('|---|---:|---|');
  const row = (label: string, xs: Array<number | undefined>) =>
    print(
      `| ${label} | ${ms(xs)} | ${xs.map((x) => (x === undefined ? '—' : `${x.toFixed(0)} ms`)).join(', ')} |`,
    );
  row(
    `POST /v1/copy with the manifest (${(JSON.stringify(keys).length / 1024 / 1024).toFixed(1)} MiB), until its 202 (client)`,
    samples.map((s) => s.acceptMs),
  );
  row(
    '**accepted → first object attempt** (server clock: jobs.created_at → min(job_objects.last_attempt_at))',
    samples.map((s) => s.firstAttemptMs),
  );
  row(
    '202 → first object finished (client, GET /v1/jobs/{id} every 100 ms)',
    samples.map((s) => s.firstDoneMs),
  );
  row(
    `202 → all ${manifestKeys.toLocaleString('en')} keys planned (client, counts.total)`,
    samples.map((s) => s.plannedMs),
  );
  console.log(`(d took ${elapsed(started)})`);
}

try {
  const started = performance.now();
  const big = only.has('c') || only.has('e');
  await seedSource(client, big);
  console.log(
    `seeded s3rver: ${MIXED.objects} objects (${mib(MIXED.bytes)})${big ? ' and 1 GiB' : ''} in ${elapsed(started)}`,
  );
  for (const id of ['a', 'b', 'c', 'e']) if (only.has(id)) await benchItem(id);
  if (only.has('d')) await benchManifest();
  print();
  print(
    `node ${process.version}, ${rclone.binary}, ${aws.binary}; ferry FERRY_WORKER_CONCURRENCY = FERRY_LOCATION_CONCURRENCY = ${CONCURRENCY}; load average after: ${loadAverage()}; whole bench ${elapsed(benchStarted)}`,
  );
} finally {
  aws.close();
  client.destroy();
  await Promise.all([s3.close(), azurite.close()]);
}
