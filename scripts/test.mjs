#!/usr/bin/env node
// The one test command (`npm test`): type-check, lint, bring dist/ up to date (the tests that run `ferry`
// as a program run the built one), then every test file under test/ with node's test runner. Arguments
// narrow the run to files whose path contains one of them:
//   npm test -- stores/s3 http/locations
// FERRY_TEST_TIMEOUT_MS sets the timeout of each test file (default 360000: the browser files walk every page at two widths
// on both databases, and others start several `ferry serve` processes: each takes 100–180 s on a loaded 2-core machine).
// PostgreSQL: tests run on SQLite and on PostgreSQL at FERRY_TEST_DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/test). With CI=true an unreachable PostgreSQL fails the run;
// elsewhere its half of the suite is skipped with a message.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);
const quick = process.env.FERRY_TEST_QUICK === '1';

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: process.env });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...findTests(full));
    else if (name.endsWith('.test.ts')) out.push(relative(root, full));
  }
  return out.sort();
}

if (!quick && filters.length === 0) {
  run('npx', ['tsc', '--noEmit', '-p', 'tsconfig.json']);
  run('npx', ['tsc', '--noEmit', '-p', 'ui/tsconfig.json']);
  run('npx', ['biome', 'check', '.']);
}

// The tests that run `ferry` as a program (test/cli, test/support/processes.ts) run the built one,
// bin/ferry.js over dist/, as users do: it is rebuilt here when a source changed since the last build.
run(process.execPath, [join(root, 'scripts', 'build.mjs'), '--if-stale']);

// FERRY_TEST_EXCLUDE: words (comma-separated) whose files are left out, as the filters pick them in
// (.ci/run leaves the console's browser tests out of its second suite).
const excluded = (process.env.FERRY_TEST_EXCLUDE ?? '').split(',').filter(Boolean);
const files = findTests(join(root, 'test')).filter(
  (f) => (filters.length === 0 || filters.some((x) => f.includes(x))) && !excluded.some((x) => f.includes(x)),
);
if (files.length === 0) {
  console.error('no test files match', filters.join(' '));
  process.exit(1);
}
// Every failed test is written a second time, as one line each, to a file (scripts/test-failures.mjs)
// that is printed after the run: a long log's tail then names what failed. FERRY_TEST_FAILURES_FILE
// keeps that file where .ci/run can collect it for its summary.
const scratch = mkdtempSync(join(tmpdir(), 'ferry-test-'));
const failuresFile = process.env.FERRY_TEST_FAILURES_FILE || join(scratch, 'failures.txt');
// Each file's time (scripts/test-times.mjs, written by the failures reporter), printed after the run with
// the 15 slowest: where CI's time goes.
const timesFile = join(scratch, 'times.txt');
const result = spawnSync(
  process.execPath,
  [
    '--openssl-legacy-provider',
    '--import',
    'tsx',
    '--test',
    // Not --test-force-exit: it ends a file once the tests it knows of have ended, and the suites a file
    // registers after a top-level await (eachDatabase) are not known yet, so they never ran.
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${join(root, 'scripts/test-failures.mjs')}`,
    `--test-reporter-destination=${failuresFile}`,
    `--test-concurrency=${process.env.FERRY_TEST_CONCURRENCY ?? '3'}`,
    // FERRY_TEST_TIMEOUT_MS: longer runs, such as the fuzzer's (test/http/fuzz).
    `--test-timeout=${process.env.FERRY_TEST_TIMEOUT_MS || '360000'}`,
    ...files,
  ],
  {
    cwd: root,
    stdio: 'inherit',
    // FERRY_TEST_CONSOLE_BUILT: dist/ui is current (build.mjs above builds the console too), so the
    // browser files, run side by side, do not each rebuild it: one file's rebuild emptied dist/ui under
    // another's page and collided with a third's (ENOTEMPTY), seen in a fresh clone.
    env: { ...process.env, FERRY_TEST_TIMES_FILE: timesFile, FERRY_TEST_CONSOLE_BUILT: '1' },
  },
);
try {
  const times = readFileSync(timesFile, 'utf8').trim();
  if (times) console.log(`\n${times}`);
} catch {
  // no file: the runner did not start
}
let failed = '';
try {
  failed = readFileSync(failuresFile, 'utf8').trim();
} catch {
  // no file: the runner did not start
}
if (failed) {
  const count = failed.split('\n').filter((line) => line.startsWith('✖')).length;
  console.log(`\nFailed tests (${count}):\n${failed}`);
}
rmSync(scratch, { recursive: true, force: true });
process.exit(result.status ?? 1);
