// bench/transfer, side by side (figures in docs/performance.md, "What verification costs"): this
// checkout's build against an earlier commit's, in one run, on the same data, for what a change of the
// copy path costs (issue 37: the write proofs and the read check against ferry before them). The
// earlier build is a `git worktree` of that commit in a temporary folder, with this checkout's
// node_modules linked in (the commit must have the same package-lock.json) and built by its own
// scripts/build.mjs; nothing of it is committed, and the worktree is removed at the end.
//
// Both servers run at once (each on SQLite in its own data directory, the settings of bench/transfer),
// against one s3rver and one azurite. Each round runs every item on both builds, in turns whose order
// alternates by round (baseline first in odd rounds, current first in even ones), after one warm-up of
// each that is not counted. Items:
//   s3-same   2,000 × 4 KiB + 20 × 8 MiB, S3 → S3 on one account (server-side copies; bench/transfer (a))
//   s3-mixed  the same, S3 → S3 on another account of the same s3rver: streamed, each object one PutObject
//   s3-big    one 1 GiB object, S3 → S3 on another account: streamed, a multipart upload of 8 MiB parts
//   az-mixed  the mixed data, S3 → Azure (bench/transfer (b))
//   az-big    the 1 GiB object, S3 → Azure (bench/transfer (c))
// It prints each item's median time for both builds, the ratio of the medians (current / baseline),
// each round's own ratio with their least and greatest, and each build's peak RSS (VmHWM of the server
// during a run, reset before it; the greatest of the rounds).
//   npm run bench:versus [-- --baseline e3b1e45 --current COMMIT --rounds 5
//                            --only s3-same,s3-mixed,s3-big,az-mixed,az-big --skip-build --cpu-prof DIR]
// --current: a commit built like the baseline, in a worktree of its own, instead of this checkout's
// dist/ (built first unless --skip-build), so the checkout can change while the bench runs.
// --cpu-prof writes a V8 profile of each server (baseline/ and current/ under DIR) when it stops.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startAzurite } from '../../test/support/azurite.js';
import { loadAverage, median } from '../support/figures.js';
import { mib } from '../support/proc.js';
import { buildDist, type FerryProcess, root, startFerry, startS3rverProcess } from '../support/processes.js';
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
  MIXED,
  removeBucket,
  SOURCE_BUCKET,
  s3Holds,
  seedSource,
} from './data.js';
import { createLocations, type Locations, prefixCopy, singleCopy } from './ferry.js';
import { CONCURRENCY, type ToolRun } from './peers.js';

const { values } = parseArgs({
  options: {
    // The last commit before issue 37's merges: the first parent of "Merge branch 'h37b'".
    baseline: { type: 'string', default: 'e3b1e45' },
    current: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    only: { type: 'string', default: 's3-same,s3-mixed,s3-big,az-mixed,az-big' },
    'skip-build': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const only = new Set(values.only.split(','));
const cpuProf = values['cpu-prof'];

const git = (args: string[], cwd = root) => {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

interface Build {
  name: 'baseline' | 'current';
  commit: string;
  checkout: string;
}

/** What prepare() checked out: an interrupted bench (SIGINT, SIGTERM) removes them too. */
const removers: Array<() => void> = [];
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const remove of removers) remove();
    process.exit(130);
  });
}

/** A commit checked out and built in a temporary folder; remove() takes it away again. */
function prepare(name: Build['name'], commit: string): Build & { remove(): void } {
  const full = git(['rev-parse', '--verify', `${commit}^{commit}`]);
  const lockDiff = git(['diff', '--stat', full, '--', 'package-lock.json']);
  if (lockDiff !== '')
    throw new Error(`${commit} has another package-lock.json: node_modules cannot be shared`);
  const checkout = join(mkdtempSync(join(tmpdir(), `ferry-${name}-`)), 'ferry');
  git(['worktree', 'add', '--detach', checkout, full]);
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    spawnSync('git', ['worktree', 'remove', '--force', checkout], { cwd: root });
    rmSync(join(checkout, '..'), { recursive: true, force: true });
  };
  removers.push(remove);
  try {
    symlinkSync(join(root, 'node_modules'), join(checkout, 'node_modules'));
    const built = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: checkout, stdio: 'inherit' });
    if (built.status !== 0) throw new Error(`building ${commit} failed (${built.status})`);
  } catch (err) {
    remove();
    throw err;
  }
  return { name, commit: full.slice(0, 10), checkout, remove };
}

interface Item {
  id: string;
  title: string;
  kind: 's3' | 'azure';
  expected: DataSet;
  run: (ferry: FerryProcess, loc: Locations, dest: string) => Promise<ToolRun>;
}

const ALL_ITEMS: Item[] = [
  {
    id: 's3-same',
    title: `S3 → S3, one account (server-side): ${MIXED.objects} objects`,
    kind: 's3',
    expected: MIXED,
    run: (f, loc, dest) =>
      prefixCopy(f, `${loc.s3a}:${SOURCE_BUCKET}/`, `${loc.s3b}:${dest}/`, MIXED.objects),
  },
  {
    id: 's3-mixed',
    title: `S3 → S3, another account (streamed, single-part): ${MIXED.objects} objects`,
    kind: 's3',
    expected: MIXED,
    run: (f, loc, dest) =>
      prefixCopy(f, `${loc.s3a}:${SOURCE_BUCKET}/`, `${loc.s3other}:${dest}/`, MIXED.objects),
  },
  {
    id: 's3-big',
    title: 'S3 → S3, another account (streamed, multipart): 1 GiB',
    kind: 's3',
    expected: BIG,
    run: (f, loc, dest) =>
      singleCopy(f, `${loc.s3a}:${BIG_BUCKET}/${BIG_KEY}`, `${loc.s3other}:${dest}/${BIG_KEY}`),
  },
  {
    id: 'az-mixed',
    title: `S3 → Azure (streamed): ${MIXED.objects} objects`,
    kind: 'azure',
    expected: MIXED,
    run: (f, loc, dest) => prefixCopy(f, `${loc.s3a}:${SOURCE_BUCKET}/`, `${loc.az}:${dest}/`, MIXED.objects),
  },
  {
    id: 'az-big',
    title: 'S3 → Azure (streamed): 1 GiB',
    kind: 'azure',
    expected: BIG,
    run: (f, loc, dest) =>
      singleCopy(f, `${loc.s3a}:${BIG_BUCKET}/${BIG_KEY}`, `${loc.az}:${dest}/${BIG_KEY}`),
  },
];
const ITEMS = ALL_ITEMS.filter((item) => only.has(item.id));

const print = (line = '') => console.log(line);
const uptime = () => spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();

print(`uptime before: ${uptime()}`);
const benchStarted = performance.now();
if (!values['skip-build'] && values.current === undefined) buildDist();
const baseline = prepare('baseline', values.baseline);
const current: Build & { remove?: () => void } =
  values.current === undefined
    ? {
        name: 'current',
        commit: `${git(['rev-parse', '--short=10', 'HEAD'])} and the work tree`,
        checkout: root,
      }
    : prepare('current', values.current);
const builds: Build[] = [baseline, current];
print(`baseline ${baseline.commit} (${baseline.checkout}), current ${current.commit} (${current.checkout})`);

const [s3, azurite] = await Promise.all([startS3rverProcess(), startAzurite()]);
const client = seedClient(s3.endpoint);
const azure = azureService(azurite.endpoint);
const servers = new Map<Build['name'], { ferry: FerryProcess; loc: Locations }>();

async function measure(build: Build, item: Item, dest: string): Promise<ToolRun> {
  if (item.kind === 's3') await createBucket(client, dest);
  else await azure.createContainer(dest);
  const { ferry, loc } = servers.get(build.name) as { ferry: FerryProcess; loc: Locations };
  const run = await item.run(ferry, loc, dest);
  check(
    `${build.name} ${item.id}`,
    item.kind === 's3' ? await s3Holds(client, dest) : await azureHolds(azure, dest),
    item.expected,
  );
  if (item.kind === 's3') await removeBucket(client, dest);
  else await azure.deleteContainer(dest);
  return run;
}

try {
  const seeded = performance.now();
  await seedSource(client, only.has('s3-big') || only.has('az-big'));
  print(`seeded in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);
  for (const build of builds) {
    const profDir = cpuProf && join(cpuProf, build.name);
    if (profDir && !existsSync(profDir)) mkdirSync(profDir, { recursive: true });
    const ferry = await startFerry({
      checkout: build.checkout,
      env: {
        FERRY_EGRESS_ALLOW: '127.0.0.1/32',
        FERRY_LOG_LEVEL: 'warn',
        FERRY_WORKER_CONCURRENCY: String(CONCURRENCY),
        FERRY_LOCATION_CONCURRENCY: String(CONCURRENCY),
      },
      nodeArgs: profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [],
    });
    servers.set(build.name, { ferry, loc: await createLocations(ferry, s3.endpoint, azurite.endpoint) });
  }
  // Warm-up, not counted: each build's code for each item, and s3rver's files in the page cache.
  for (const item of ITEMS)
    for (const build of builds) await measure(build, item, `w-${item.id}-${build.name}`);

  const samples = new Map<string, ToolRun[]>();
  for (let r = 1; r <= rounds; r++) {
    const order = r % 2 === 1 ? builds : [...builds].reverse();
    const line: string[] = [];
    for (const item of ITEMS) {
      for (const build of order) {
        const run = await measure(build, item, `r${r}-${item.id}-${build.name}`);
        const key = `${item.id} ${build.name}`;
        samples.set(key, [...(samples.get(key) ?? []), run]);
      }
      const [b, c] = builds.map((build) => samples.get(`${item.id} ${build.name}`)?.at(-1) as ToolRun);
      // The peaks too: a round's line is all that is left of it when a later round fails.
      line.push(
        `${item.id} ${(c as ToolRun).seconds.toFixed(2)}/${(b as ToolRun).seconds.toFixed(2)} s (peak ${mib((c as ToolRun).peakBytes)}/${mib((b as ToolRun).peakBytes)})`,
      );
    }
    print(
      `round ${r} of ${rounds} (${order[0]?.name} first; current/baseline): ${line.join(', ')}; load ${loadAverage()}`,
    );
  }

  print();
  print(
    `current ${current.commit} against baseline ${baseline.commit}: ${rounds} rounds, interleaved; node ${process.version}; FERRY_WORKER_CONCURRENCY = FERRY_LOCATION_CONCURRENCY = ${CONCURRENCY}`,
  );
  print();
  print(
    '| item | baseline median | current median | ratio of medians | ratio per round (least – greatest) | peak RSS baseline | peak RSS current | baseline runs | current runs |',
  );
  print('|---|---:|---:|---:|---|---:|---:|---|---|');
  for (const item of ITEMS) {
    const b = samples.get(`${item.id} baseline`) as ToolRun[];
    const c = samples.get(`${item.id} current`) as ToolRun[];
    const perRound = c.map((run, i) => run.seconds / (b[i] as ToolRun).seconds);
    const secs = (xs: ToolRun[]) => xs.map((x) => x.seconds.toFixed(2)).join(', ');
    const peak = (xs: ToolRun[]) => mib(Math.max(...xs.map((x) => x.peakBytes)));
    print(
      `| ${item.title} | ${median(b.map((x) => x.seconds)).toFixed(2)} s | ${median(c.map((x) => x.seconds)).toFixed(2)} s | **${(median(c.map((x) => x.seconds)) / median(b.map((x) => x.seconds))).toFixed(3)}** | ${median(perRound).toFixed(3)} (${Math.min(...perRound).toFixed(3)} – ${Math.max(...perRound).toFixed(3)}) | ${peak(b)} | ${peak(c)} | ${secs(b)} | ${secs(c)} |`,
    );
  }
  print();
  print(`uptime after: ${uptime()}; whole bench ${((performance.now() - benchStarted) / 1000).toFixed(0)} s`);
} finally {
  await Promise.all([...servers.values()].map(({ ferry }) => ferry.close()));
  client.destroy();
  await Promise.all([s3.close(), azurite.close()]);
  baseline.remove();
  current.remove?.();
}
