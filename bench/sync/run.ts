// bench/sync (figures in docs/performance.md, "Sync"): ferry's `POST /v1/sync` beside `rclone sync`, S3 to S3
// on one s3rver, side by side in one run, with 16 transfers and checkers each (bench/transfer/peers.ts).
//
// 1. Seeds a source bucket with N small objects (d0..d99 folders), and syncs it once with each tool into a
//    destination of its own (both copy everything; printed, not the measure).
// 2. Unchanged: syncs again, `--runs` times, ferry and rclone alternating who goes first, for each compare
//    mode paired with rclone's flag of the same meaning: ferry `size-modtime` with rclone's default (size and
//    modification time, which on S3 costs it a HEAD per object) and with `--update --use-server-modtime`
//    (the store's time from the listing, as ferry does), ferry `size` with `--size-only`, ferry `checksum`
//    with `--checksum`. None copies anything; the ratio ferry/rclone of the medians is printed per mode,
//    against the faster rclone flavour (the goal: at most 1.2).
// 3. Changed: rewrites `--changed` percent of the source objects (another size), then syncs with each tool.
//    ferry's time is compared with its unchanged sync (the listing) plus a manifest copy job of just those
//    objects into an empty bucket (the copy of that 1%); the goal is a ratio of at most 1.
//   npm run bench:sync [-- --objects 100000 --runs 3 --changed 1 --modes size-modtime,size,checksum --skip-build]
import { parseArgs } from 'node:util';
import { median } from '../support/figures.js';
import { buildDist, startFerry, startS3rverProcess } from '../support/processes.js';
import { seedBucket } from '../support/s3.js';
import { createLocations, manifestCopy, prefixSync } from '../transfer/ferry.js';
import { CONCURRENCY, Rclone, type RcloneSyncMode, rcloneSync } from '../transfer/peers.js';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '3' },
    changed: { type: 'string', default: '1' },
    modes: { type: 'string', default: 'size-modtime,size,checksum' },
    'skip-build': { type: 'boolean', default: false },
  },
});
const OBJECTS = Number(values.objects);
const RUNS = Number(values.runs);
const CHANGED = Math.max(1, Math.round((OBJECTS * Number(values.changed)) / 100));
// Each ferry compare mode beside the rclone flags of the same meaning; the ratio is against the faster.
const PAIRS: Record<string, RcloneSyncMode[]> = {
  'size-modtime': ['default', 'server-modtime'],
  size: ['size-only'],
  checksum: ['checksum'],
};
const modes = (values.modes as string).split(',').filter((m) => m in PAIRS);
if (!values['skip-build']) buildDist();

const s = (x: number) => `${x.toFixed(2)} s`;
const mib = (b: number) => `${(b / 1048576).toFixed(0)} MiB`;

const s3 = await startS3rverProcess();
const ferry = await startFerry({
  env: {
    FERRY_EGRESS_ALLOW: '127.0.0.1/32',
    FERRY_LOG_LEVEL: 'warn',
    FERRY_WORKER_CONCURRENCY: String(CONCURRENCY),
    FERRY_LOCATION_CONCURRENCY: String(CONCURRENCY),
  },
});
try {
  const loc = await createLocations(ferry, s3.endpoint, 'http://127.0.0.1:1');
  const rclone = rcloneSync(new Rclone({ s3: s3.endpoint, azure: 'http://127.0.0.1:1' }));
  const tag = Date.now().toString(36);
  const [src, fdst, rdst, cdst] = ['src', 'fdst', 'rdst', 'cdst'].map((p) => `bench-sync-${p}-${tag}`) as [
    string,
    string,
    string,
    string,
  ];
  const keys = Array.from({ length: OBJECTS }, (_, i) => `d${i % 100}/k${i}.txt`);
  const seedStart = performance.now();
  await seedBucket(s3.endpoint, src, keys, { body: (k) => `${k} `.repeat(20) });
  await seedBucket(s3.endpoint, fdst, []);
  await seedBucket(s3.endpoint, rdst, []);
  await seedBucket(s3.endpoint, cdst, []);
  console.log(`seeded ${OBJECTS} objects in ${s((performance.now() - seedStart) / 1000)}`);
  const from = `${loc.s3a}:${src}/`;
  const to = `${loc.s3b}:${fdst}/`;

  const firstFerry = await prefixSync(ferry, from, to);
  const firstRclone = await rclone.sync(`S3:${src}`, `S3:${rdst}`, 'default');
  console.log(
    `first sync (copies all): ferry ${s(firstFerry.seconds)} (${firstFerry.view.counts.succeeded} copied), rclone ${s(firstRclone.seconds)}`,
  );

  const unchanged = new Map<string, number>();
  for (const mode of modes) {
    const peers = PAIRS[mode] as RcloneSyncMode[];
    const f: number[] = [];
    const r = new Map<RcloneSyncMode, number[]>(peers.map((p) => [p, []]));
    let peak = 0;
    for (let run = 0; run < RUNS; run++) {
      const ferryRun = async () => {
        const result = await prefixSync(ferry, from, to, { compare: mode });
        if (result.view.counts.succeeded !== 0 || result.view.counts.skipped !== OBJECTS)
          throw new Error(`an unchanged ferry sync copied: ${JSON.stringify(result.view.counts)}`);
        peak = Math.max(peak, result.peakBytes);
        f.push(result.seconds);
      };
      const rcloneRuns = async () => {
        for (const p of peers) r.get(p)?.push((await rclone.sync(`S3:${src}`, `S3:${rdst}`, p)).seconds);
      };
      if (run % 2 === 0) {
        await ferryRun();
        await rcloneRuns();
      } else {
        await rcloneRuns();
        await ferryRun();
      }
      const theirs = peers.map((p) => `rclone ${p} ${s(r.get(p)?.at(-1) as number)}`).join(', ');
      console.log(`  ${mode} run ${run + 1}: ferry ${s(f.at(-1) as number)}, ${theirs}`);
    }
    unchanged.set(mode, median(f));
    const fastest = Math.min(...peers.map((p) => median(r.get(p) as number[])));
    const theirs = peers.map((p) => `rclone ${p} ${s(median(r.get(p) as number[]))}`).join(', ');
    console.log(
      `unchanged ${OBJECTS}, ferry compare ${mode}: ferry ${s(median(f))}, ${theirs}; ratio to the faster ${(median(f) / fastest).toFixed(2)} (ferry peak RSS ${mib(peak)})`,
    );
  }

  const changed = keys.filter((_, i) => i % Math.floor(OBJECTS / CHANGED) === 0).slice(0, CHANGED);
  await seedBucket(s3.endpoint, src, changed, { body: (k) => `${k} changed `.repeat(20), exists: true });
  const copyOnly = await manifestCopy(ferry, from, `${loc.s3b}:${cdst}/`, changed);
  const changedFerry = await prefixSync(ferry, from, to);
  if (changedFerry.view.counts.succeeded !== CHANGED)
    throw new Error(`the changed sync copied ${changedFerry.view.counts.succeeded}, not ${CHANGED}`);
  const changedRclone = await rclone.sync(`S3:${src}`, `S3:${rdst}`, 'default');
  const listing = unchanged.get('size-modtime') ?? unchanged.values().next().value ?? 0;
  console.log(
    `changed ${CHANGED} of ${OBJECTS}: ferry sync ${s(changedFerry.seconds)} against listing ${s(listing)} + copy of the changed ${s(copyOnly.seconds)} = ${s(listing + copyOnly.seconds)}, ratio ${(changedFerry.seconds / (listing + copyOnly.seconds)).toFixed(2)}; rclone sync ${s(changedRclone.seconds)}`,
  );
} finally {
  await ferry.close();
  await s3.close();
}
