#!/usr/bin/env node
// The one test command (`npm test`) and its tiers (docs/testing.md):
//   node scripts/test.mjs                      every tier but long: static, unit, database, system
//   node scripts/test.mjs --tier unit,database  those tiers (npm run test:unit, test:database, ...)
//   node scripts/test.mjs stores/s3 http/files  the test files whose path contains one of the words, of
//                                              any tier (test/long/ too), in their tiers' order
//   node scripts/test.mjs --list               each file's tier and what decided it, nothing run
//   node scripts/test.mjs --node PATH           also on that node binary (repeatable): the unit and
//                                              database files and the system tier's RUNTIME_FILES,
//                                              in the same places as the rest (.ci/run, docs/testing.md)
// static is both type-checks (incremental, tsc --build) and the linter. The other tiers run their test
// files (scripts/test-tiers.mjs says which file is in which), each file in a process of its own under
// node's test runner, several at a time (CONCURRENCY), the longest first when a previous run on this
// checkout timed them. Each file has a time limit (FILE_LIMIT_S): a file still running then is stopped,
// with every process it started, and named with the tests it was in. Each file's output is printed in
// one piece when it ends (all of it when it failed; one line when it passed), then the failures again at
// the end of the run, each tier's time and the slowest files. The last line is "tests: N passed, N
// failed, N skipped".
// Settings: FERRY_TEST_CONCURRENCY (files at once, every tier), FERRY_TEST_FILE_LIMIT_S (a file's time
// limit), FERRY_TEST_TIMEOUT_MS (one test's, the file's by default; the fuzzer's long run raises both), FERRY_TEST_VERBOSE=1
// (every file's whole output); FERRY_TEST_FAILURES_FILE, FERRY_TEST_TIMES_FILE and FERRY_TEST_TOTALS_FILE
// (where .ci/run collects the failures, each file's time and the counts). PostgreSQL: database tests run on SQLite and on PostgreSQL at
// FERRY_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test); with CI=true an unreachable
// PostgreSQL fails the run, elsewhere its half is skipped with a message.
import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { classify, findTests, TIERS } from './test-tiers.mjs';
import { buildTestTree, inTree } from './test-tree.mjs';

const root = new URL('..', import.meta.url).pathname;
const cores = availableParallelism?.() ?? 2;

// Files at once per tier, on this machine's cores (2 on CI). Unit files only compute: one per core.
// Database files wait on PostgreSQL as much as they compute: one more than the cores. System files are
// of two kinds: most wait (on leases, caps, timeouts, their servers: bandwidth-sqlite took 10 CPU-s
// in 78 s, the soak 21 in 117, refresher/processes 13 in 73, resume-s3-postgres 19 in 55), while a
// browser file keeps most of two cores busy by itself (chromium's processes and the test's node). So
// the system tier has three more places than the cores and a browser file takes two of them
// (`weight`): five waiting files at once, or a browser file and three others, or two browser files and
// one other. With two more places than the cores, the CI runs of 757432d and 38d2350 used 73% of the
// two cores' time in the system tier (2,430 CPU-s in 1,661 s).
const CONCURRENCY = {
  unit: cores,
  database: cores + 1,
  system: cores + 3,
  long: 1,
};

/** The places of a tier's concurrency a file takes while it runs (above). */
function weight(file) {
  return file.startsWith('test/browser/') ? 2 : 1;
}
// A file's time limit, seconds: the slowest files take 2 to 4 minutes on a loaded 2-core machine.
const FILE_LIMIT_S = { unit: 120, database: 300, system: 600, long: 1800 };

function parseArgs(argv) {
  const tiers = [];
  const filters = [];
  const nodes = [];
  let list = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--list') list = true;
    else if (arg === '--keep-times') keepTimes();
    else if (arg === '--node' || arg.startsWith('--node=')) {
      const value = arg === '--node' ? argv[++i] : arg.slice('--node='.length);
      if (!value) {
        console.error('--node needs the path of a node binary');
        process.exit(2);
      }
      nodes.push(value);
    } else if (arg === '--tier' || arg.startsWith('--tier=')) {
      const value = arg === '--tier' ? argv[++i] : arg.slice('--tier='.length);
      for (const tier of String(value ?? '')
        .split(',')
        .filter(Boolean)) {
        if (!TIERS.includes(tier)) {
          console.error(`unknown tier ${tier}: the tiers are ${TIERS.join(', ')}`);
          process.exit(2);
        }
        tiers.push(tier);
      }
    } else filters.push(arg);
  }
  return { tiers, filters, list, nodes };
}

/**
 * `npm run test:times`: this checkout's last figures (every file of a whole run) become
 * scripts/test-times.json, the order a fresh clone starts its files in (previousTimes).
 */
function keepTimes() {
  const times = JSON.parse(readFileSync(join(root, 'node_modules/.cache/ferry-test/times.json'), 'utf8'));
  const kept = Object.fromEntries(
    Object.keys(times)
      .filter((file) => existsSync(join(root, file)))
      .sort()
      .map((file) => [file, Math.round(times[file] / 100) * 100]),
  );
  writeFileSync(join(root, 'scripts/test-times.json'), `${JSON.stringify(kept, null, 2)}\n`);
  console.log(`scripts/test-times.json: ${Object.keys(kept).length} files`);
  process.exit(0);
}

const { tiers: askedTiers, filters, list, nodes: otherNodes } = parseArgs(process.argv.slice(2));
const everyFile = classify(root, findTests(root));

if (list) {
  for (const { file, tier, reason } of everyFile)
    console.log(`${tier.padEnd(9)} ${file.padEnd(48)} ${reason}`);
  process.exit(0);
}

// No tier named: every tier but long, or, with words, every tier the chosen files are in.
const tiers = askedTiers.length > 0 ? askedTiers : filters.length > 0 ? TIERS.slice(1) : TIERS.slice(0, 4);
const chosen = everyFile.filter(
  ({ file, tier }) =>
    tiers.includes(tier) && (filters.length === 0 || filters.some((word) => file.includes(word))),
);
if (filters.length > 0 && chosen.length === 0) {
  console.error(`no test files of the tiers ${tiers.join(', ')} match`, filters.join(' '));
  process.exit(1);
}

// The system tier's files where a Node release changes what ferry does: the stores' SDKs and streams, the
// HTTP server, undici and the object paths. The rest of the system tier (the browser files, the CLI, the
// `ferry serve` processes, webhooks, the README walk-through) drives that same code through the same
// requests, and runs on the first node only.
const RUNTIME_FILES = ['test/stores/', 'test/http/', 'test/net/', 'test/objects/'];

/**
 * The nodes the files run on: this one (every chosen file), then each --node (the unit and database
 * files and RUNTIME_FILES). One run holds them all, so their files share one tier's places: a second
 * release's files fill the cores while the first's wait, instead of running after them. A release's
 * better-sqlite3 addon is found by its version (`bindings`' compiled/VERSION/PLATFORM/ARCH, which
 * .ci/run lays out), so both load from one node_modules at once.
 */
const nodes = [
  { execPath: process.execPath, version: process.versions.node, label: '' },
  ...otherNodes.map((execPath) => {
    const r = spawnSync(execPath, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    if (r.status !== 0) {
      console.error(`--node ${execPath}: it does not run (${(r.stderr || r.error?.message || '').trim()})`);
      process.exit(2);
    }
    const version = r.stdout.trim();
    return { execPath, version, label: `[node ${version}] ` };
  }),
];
const runsOn = (node, { file, tier }) =>
  node === nodes[0] ||
  tier === 'unit' ||
  tier === 'database' ||
  (tier === 'system' && RUNTIME_FILES.some((p) => file.startsWith(p)));
if (nodes.length > 1) {
  console.log(
    `nodes: ${nodes.map((n, i) => `${n.version} (${i === 0 ? 'every file' : `unit, database and ${RUNTIME_FILES.join(' ')}`})`).join(', ')}`,
  );
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: process.env });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const started = Date.now();
const tierTimes = [];

// The static tier runs beside the others (one process, mostly one core, while the unit and database
// files wait on each other and on PostgreSQL); its output is printed in one piece when it ends.
let staticTier = Promise.resolve(undefined);
if (tiers.includes('static') && filters.length === 0) {
  staticTier = runStatic();
}

/** Both type-checks, then the linter; resolves with the first that failed (undefined when none). */
async function runStatic() {
  const t0 = Date.now();
  let output = '';
  let failedStep;
  // tsconfig.static.json: both projects, incremental, so a second run checks only what changed.
  for (const args of [
    ['tsc', '--build', 'tsconfig.static.json'],
    ['biome', 'check', '.'],
  ]) {
    const code = await new Promise((resolve) => {
      const child = spawn('npx', args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
      child.stdout.on('data', (chunk) => {
        output += chunk;
      });
      child.stderr.on('data', (chunk) => {
        output += chunk;
      });
      child.once('close', (status) => resolve(status));
    });
    if (code !== 0) {
      failedStep = `npx ${args.join(' ')} exited with ${code}`;
      break;
    }
  }
  console.log(
    `\n=== static: type-checks and the linter, ${failedStep ? 'FAILED' : 'passed'} ===\n${output.trimEnd()}`,
  );
  tierTimes.unshift({ tier: 'static', files: 0, ms: Date.now() - t0, fileMs: 0, cpuMs: 0 });
  return failedStep;
}

const runTiers = tiers.filter((tier) => tier !== 'static' && chosen.some((c) => c.tier === tier));
if (runTiers.length === 0) {
  await finish();
} else {
  // The tests that run `ferry` as a program (test/cli, test/support/processes.ts) run the built one,
  // bin/ferry.js over dist/, as users do: it is rebuilt here when a source changed since the last build.
  run(process.execPath, [join(root, 'scripts', 'build.mjs'), '--if-stale']);
  await runFiles();
}

// ---------------------------------------------------------------------------------------------------

/**
 * Each file's time in the last run of this checkout, ms: the longest start first. A fresh clone (CI)
 * has none yet and takes them from scripts/test-times.json, a copy of a whole run's figures kept with
 * the code (`npm run test:times` refreshes it): without it, files would start in name order, every
 * browser file at the beginning and the slowest engine files in the middle of the run.
 */
function previousTimes() {
  for (const file of ['node_modules/.cache/ferry-test/times.json', 'scripts/test-times.json']) {
    try {
      return JSON.parse(readFileSync(join(root, file), 'utf8'));
    } catch {
      // not there: the next
    }
  }
  return {};
}

async function runFiles() {
  const scratch = mkdtempSync(join(tmpdir(), 'ferry-test-'));
  // The test files as JavaScript (scripts/test-tree.mjs says why), built once for every tier of the run.
  const tree = await buildTestTree(root, join(scratch, 'tree'));
  const before = previousTimes();
  const results = [];
  let reports = 0;
  try {
    for (const tier of runTiers) {
      // Each file on each node it runs on (runsOn), the longest first, a file's first node before the next.
      const jobs = chosen
        .filter((c) => c.tier === tier)
        .flatMap((c) => nodes.filter((node) => runsOn(node, c)).map((node) => ({ file: c.file, node })))
        .sort(
          (a, b) =>
            (before[b.file] ?? 0) - (before[a.file] ?? 0) ||
            a.file.localeCompare(b.file) ||
            nodes.indexOf(a.node) - nodes.indexOf(b.node),
        );
      const concurrency = Number(process.env.FERRY_TEST_CONCURRENCY) || CONCURRENCY[tier];
      const limitS = Number(process.env.FERRY_TEST_FILE_LIMIT_S) || FILE_LIMIT_S[tier];
      const others = jobs.filter((j) => j.node !== nodes[0]).length;
      console.log(
        `\n=== ${tier}: ${jobs.length} files${
          others > 0
            ? ` (${others} of them on node ${nodes
                .slice(1)
                .map((n) => n.version)
                .join(', ')})`
            : ''
        }, ${concurrency} at a time, ${limitS} s each at most ===`,
      );
      const t0 = Date.now();
      // The files in the order above, each when the places it takes (`weight`) are free. The first
      // file waiting is never passed: when a browser file waits for its second place, the place free
      // now stays free until one more file ends, a few seconds. Letting a one-place file take it
      // instead starved the browser files, since a one-place file took every place that came free
      // while any was left: in the first CI with Node 24's files beside Node 20's, all eleven browser
      // files ran last, two at a time, a tail of three minutes.
      const queue = [...jobs];
      const places = ({ file }) => Math.min(tier === 'system' ? weight(file) : 1, concurrency);
      await new Promise((resolve, reject) => {
        let free = concurrency;
        let running = 0;
        const next = () => {
          for (;;) {
            if (queue.length === 0 || places(queue[0]) > free) break;
            const job = queue.shift();
            free -= places(job);
            running++;
            runFile(job, tier, limitS, join(scratch, `${++reports}.jsonl`), tree).then((result) => {
              results.push(result);
              print(result);
              free += places(job);
              running--;
              next();
            }, reject);
          }
          if (queue.length === 0 && running === 0) resolve();
        };
        next();
      });
      const mine = results.filter((r) => r.tier === tier);
      tierTimes.push({
        tier,
        files: mine.length,
        ms: Date.now() - t0,
        fileMs: mine.reduce((sum, r) => sum + r.ms, 0),
        cpuMs: mine.reduce((sum, r) => sum + r.cpuMs, 0),
        ...count(mine),
      });
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  saveTimes(results);
  await finish(results);
}

/** Runs one test file in a process group of its own; resolves when it has ended or been stopped. */
function runFile({ file, node }, tier, limitS, reportFile, tree) {
  writeFileSync(reportFile, '');
  const args = [
    '--openssl-legacy-provider',
    // The file's compiled JavaScript maps back to its .ts in the checkout (scripts/test-tree.mjs).
    '--enable-source-maps',
    '--import',
    join(root, 'scripts/test-guard.mjs'),
    '--import',
    join(root, 'scripts/test-cpu.mjs'),
    '--test',
    // Not --test-force-exit: it ends a file once the tests it knows of have ended, and the suites a file
    // registers after a top-level await (eachDatabase) are not known yet, so they never ran.
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    // It writes its own file and yields nothing to its destination (not /dev/null: Node 24 fsyncs a
    // reporter's file as it closes it, which /dev/null refuses with EINVAL).
    `--test-reporter=${join(root, 'scripts/test-report.mjs')}`,
    '--test-reporter-destination=stdout',
    // One test's time limit is the file's unless set: the runner's limit names what was running, and a
    // lower one only made a slow machine fail a file (a browser file at 360 s under a load of 28).
    `--test-timeout=${process.env.FERRY_TEST_TIMEOUT_MS || String(limitS * 1000)}`,
    inTree(tree, file),
  ];
  const t0 = Date.now();
  // Without NODE_EXTRA_CA_CERTS (this kind of machine sets it to the system's bundle): Node reads and
  // parses every certificate of it as each process starts, about 0.05 s of CPU for `node -e 1` and 0.1 to
  // 0.25 s for a process that loads the server, in each of the ~1,500 node processes of a CI run (test
  // files, `ferry serve`, the CLI). The tests reach servers on this machine only, and a test that speaks
  // TLS gives the certificate it trusts.
  const { NODE_EXTRA_CA_CERTS: _unused, ...inherited } = process.env;
  return new Promise((resolve) => {
    const child = spawn(node.execPath, args, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      // A group of its own: the time limit stops the file with every process it started.
      detached: true,
      env: {
        ...inherited,
        FERRY_TEST_TIER: tier,
        FERRY_TEST_REPORT_FILE: reportFile,
        // dist/ui is current (build.mjs above builds the console too), so the browser files, run side by
        // side, do not each rebuild it (test/support/console-build.ts).
        FERRY_TEST_CONSOLE_BUILT: '1',
        // What the file starts by name (npx, node) is of its own release, as what it starts by
        // process.execPath is.
        ...(node === nodes[0] ? {} : { PATH: `${dirname(node.execPath)}:${process.env.PATH ?? ''}` }),
      },
    });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    let stopped = false;
    const limit = setTimeout(() => {
      stopped = true;
      signalGroup(child.pid, 'SIGTERM');
      setTimeout(() => signalGroup(child.pid, 'SIGKILL'), 5000).unref();
    }, limitS * 1000);
    child.once('exit', (code, signal) => {
      clearTimeout(limit);
      const ms = Date.now() - t0;
      // Whatever the file left running (a server it did not stop) goes with it, and is named.
      const strays = groupMembers(child.pid);
      signalGroup(child.pid, 'SIGKILL');
      // The pipes close once every process holding them has gone; output written after that is lost.
      setTimeout(() => {
        const report = readReport(reportFile);
        resolve({
          file,
          // The file as printed: with its node's release when it is not the first node.
          name: `${node.label}${file}`,
          first: node === nodes[0],
          tier,
          ms,
          code,
          signal,
          stopped,
          strays,
          limitS,
          output: Buffer.concat(output).toString(),
          ...report,
        });
      }, 50);
    });
  });
}

/**
 * The commands of the processes still in a group, but tsx's esbuild service, which ends on its own a
 * moment after the node that started it.
 */
function groupMembers(pgid) {
  const out = [];
  let entries = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out; // no /proc: not Linux, nothing named
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid pgrp ...: the fields after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid || fields[0] === 'Z') continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (!command.includes('esbuild')) out.push(`${entry} ${command.slice(0, 120)}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Sends `signal` to a process group, if any process is left in it. */
function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
}

function readReport(path) {
  const counts = { pass: 0, fail: 0, skip: 0, todo: 0 };
  let cpuMs = 0;
  let ownCpuMs = 0;
  const failures = [];
  const open = [];
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    // no report: the process did not get as far as its first test
  }
  for (const line of text.split('\n')) {
    if (!line) continue;
    let record;
    try {
      record = JSON.parse(line);
    } catch {
      continue; // a line cut short by a stop
    }
    if (record.start !== undefined) open.push(record.start);
    if (record.end !== undefined) {
      const at = open.lastIndexOf(record.end);
      if (at >= 0) open.splice(at, 1);
    }
    if (record.test) counts[record.test] = (counts[record.test] ?? 0) + 1;
    if (record.failure) failures.push(record.failure);
    if (record.cpu !== undefined) cpuMs = Math.max(cpuMs, record.cpu);
    // The parent (node --test) uses little of its own: the largest is the test file's process.
    if (record.own !== undefined) ownCpuMs = Math.max(ownCpuMs, record.own);
  }
  return { counts, failures, open, cpuMs, ownCpuMs };
}

function failed(result) {
  return result.stopped || result.code !== 0 || result.counts.fail > 0 || tests(result) === 0;
}

function tests(result) {
  return result.counts.pass + result.counts.fail + result.counts.skip + result.counts.todo;
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** Why a failed file failed, beyond its failed tests. */
function fileProblem(result) {
  if (result.stopped) {
    const inside =
      result.open.length > 0 ? `, in:\n${result.open.map((n) => `      ${n.trim()}`).join('\n')}` : '';
    return `stopped at its time limit of ${result.limitS} s (FERRY_TEST_FILE_LIMIT_S)${inside}`;
  }
  if (tests(result) === 0) return `ran no test (exit code ${result.code}, signal ${result.signal})`;
  if (result.counts.fail === 0 && result.code !== 0)
    return `exited with code ${result.code}, signal ${result.signal}, with no test failed`;
  return undefined;
}

function print(result) {
  const c = result.counts;
  const summary = `${c.pass} passed${c.fail ? `, ${c.fail} failed` : ''}${c.skip ? `, ${c.skip} skipped` : ''}`;
  const strays =
    result.strays.length > 0
      ? `\n  it left processes running, killed now:\n    ${result.strays.join('\n    ')}`
      : '';
  if (failed(result) || process.env.FERRY_TEST_VERBOSE === '1') {
    console.log(`\n--- ${result.name} (${result.tier}) ---\n${result.output.trimEnd()}`);
  }
  if (failed(result)) {
    const problem = fileProblem(result);
    console.log(
      `✖ ${result.name}  ${seconds(result.ms)} (CPU ${seconds(result.cpuMs)})  ${summary}${strays}${problem ? `: ${problem}` : ''}`,
    );
  } else {
    console.log(
      `✔ ${result.name}  ${seconds(result.ms)} (CPU ${seconds(result.cpuMs)})  ${summary}${strays}`,
    );
  }
}

function count(results) {
  const totals = { pass: 0, fail: 0, skip: 0, failedFiles: 0 };
  for (const r of results) {
    totals.pass += r.counts.pass;
    totals.fail += r.counts.fail;
    totals.skip += r.counts.skip + r.counts.todo;
    if (failed(r)) totals.failedFiles++;
  }
  return totals;
}

function saveTimes(results) {
  // Read again now: another run of this checkout may have written its own files' times meanwhile.
  const times = previousTimes();
  // The first node's times: the order of the next run (a second release's file runs beside it).
  for (const r of results) if (!r.stopped && r.first) times[r.file] = r.ms;
  try {
    const dir = join(root, 'node_modules/.cache/ferry-test');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'times.json'), `${JSON.stringify(times, null, 1)}\n`);
  } catch {
    // no node_modules to keep it in: the next run starts files in name order
  }
}

async function finish(results = []) {
  const staticFailed = await staticTier;
  const lines = [];
  if (results.length > 0) {
    lines.push(
      '',
      `Slowest ${Math.min(20, results.length)} of ${results.length} files (each from its start to its end, files run side by side):`,
    );
    for (const r of [...results].sort((a, b) => b.ms - a.ms).slice(0, 20)) {
      lines.push(`${seconds(r.ms).padStart(9)}  ${r.tier.padEnd(8)}  ${r.name}`);
    }
    // On two cores a file's CPU time, not its wall time, is what it takes from the files beside it.
    lines.push(
      '',
      `The ${Math.min(20, results.length)} files that used the most CPU (theirs and their processes'):`,
    );
    for (const r of [...results].sort((a, b) => b.cpuMs - a.cpuMs).slice(0, 20)) {
      lines.push(
        `${seconds(r.cpuMs).padStart(9)}  ${r.tier.padEnd(8)}  ${r.name}  (${seconds(r.ownCpuMs)} in the test's own process)`,
      );
    }
  }
  if (tierTimes.length > 0) {
    lines.push('', "Time per tier (wall; the files' own times added up):");
    for (const t of tierTimes) {
      const what =
        t.tier === 'static'
          ? ''
          : `  ${t.files} files, ${t.pass} passed, ${t.fail} failed, ${t.skip} skipped; files' time ${seconds(t.fileMs)}, CPU ${seconds(t.cpuMs)}`;
      lines.push(`  ${t.tier.padEnd(9)} ${seconds(t.ms).padStart(9)}${what}`);
    }
    lines.push(`  ${'all'.padEnd(9)} ${seconds(Date.now() - started).padStart(9)}`);
  }
  const failures = [];
  for (const r of results) {
    if (!failed(r)) continue;
    const problem = fileProblem(r);
    if (problem) failures.push(`✖ ${r.name} ${problem}`);
    // A second release's failure says which: "✖ [node 24.21.0] test/…".
    failures.push(
      ...r.failures.map((f) => (r.first ? f : f.replace(/^✖ /, `✖ ${r.name.slice(0, -r.file.length)}`))),
    );
  }
  if (staticFailed) failures.unshift(`✖ static: ${staticFailed}`);
  if (failures.length > 0) lines.push('', `Failed (${failures.length}):`, ...failures);
  const totals = count(results);
  lines.push(
    '',
    `tests: ${totals.pass} passed, ${totals.fail + failedWithoutTest(results) + (staticFailed ? 1 : 0)} failed, ${totals.skip} skipped`,
  );
  console.log(lines.join('\n'));
  if (process.env.FERRY_TEST_FAILURES_FILE && failures.length > 0) {
    appendFileSync(process.env.FERRY_TEST_FAILURES_FILE, `${failures.join('\n')}\n`);
  }
  if (process.env.FERRY_TEST_TOTALS_FILE) {
    appendFileSync(
      process.env.FERRY_TEST_TOTALS_FILE,
      `${totals.pass} ${totals.fail + failedWithoutTest(results) + (staticFailed ? 1 : 0)} ${totals.skip}\n`,
    );
  }
  if (process.env.FERRY_TEST_TIMES_FILE && results.length > 0) {
    appendFileSync(
      process.env.FERRY_TEST_TIMES_FILE,
      `${results.map((r) => `${r.ms}\t${r.tier}\t${r.name}\t${r.cpuMs}`).join('\n')}\n`,
    );
  }
  process.exit(failures.length > 0 ? 1 : 0);
}

/** Files that failed with no failed test of their own (stopped, crashed, ran none): each counts one. */
function failedWithoutTest(results) {
  return results.filter((r) => failed(r) && r.counts.fail === 0).length;
}
