// A reporter for node's test runner that adds up, per test file, the time of its top-level tests and
// suites (what the file spent running tests, not loading modules), and writes one line per file then the
// 15 slowest. scripts/test.mjs gives it a file and prints that file after the run, so CI's log says
// where the suite's time goes (docs/testing.md, "Where the time goes").
const SLOWEST = 15;

function seconds(ms) {
  return `${(ms / 1000).toFixed(1).padStart(7)} s`;
}

export default async function* times(source) {
  const perFile = new Map();
  // A suite declared by a helper (eachDatabase's describe in test/support/fixtures.ts) reports the
  // helper's file; its tests, which end just before it, report the test file: it is counted there.
  let lastTestFile;
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, file, details } = event.data;
    if (!file) continue;
    const where = file.replace(`${process.cwd()}/`, '');
    if (nesting > 0) {
      if (where.endsWith('.test.ts')) lastTestFile = where;
      continue;
    }
    const owner = where.endsWith('.test.ts') ? where : (lastTestFile ?? where);
    perFile.set(owner, (perFile.get(owner) ?? 0) + (details?.duration_ms ?? 0));
  }
  if (perFile.size === 0) return;
  const files = [...perFile.entries()];
  const total = files.reduce((sum, [, ms]) => sum + ms, 0);
  yield `Time per file (top-level tests, added up; files run side by side):\n`;
  for (const [file, ms] of files.sort(([a], [b]) => a.localeCompare(b))) yield `${seconds(ms)}  ${file}\n`;
  yield `\nSlowest ${Math.min(SLOWEST, files.length)} of ${files.length} files (${seconds(total).trim()} in all):\n`;
  for (const [file, ms] of files.sort(([, a], [, b]) => b - a).slice(0, SLOWEST)) {
    yield `${seconds(ms)}  ${file}\n`;
  }
}
