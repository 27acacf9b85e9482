// Each test file's time, added up from the events of node's test runner: the time of its top-level tests
// and suites (what the file spent running tests, not loading modules). scripts/test-failures.mjs, the
// reporter, feeds it every event and writes `render()` to FERRY_TEST_TIMES_FILE at the end (a third
// reporter would push the runner past its listener limit); scripts/test.mjs prints that file after the
// run, so CI's log says where the suite's time goes (docs/testing.md, "Where the time goes").
const SLOWEST = 15;

function seconds(ms) {
  return `${(ms / 1000).toFixed(1).padStart(7)} s`;
}

export function fileTimes() {
  const perFile = new Map();
  // A suite declared by a helper (eachDatabase's describe in test/support/fixtures.ts) reports the
  // helper's file; its tests, which end just before it, report the test file: it is counted there.
  let lastTestFile;
  return {
    add(event) {
      if (event.type !== 'test:pass' && event.type !== 'test:fail') return;
      const { nesting, file, details } = event.data;
      if (!file) return;
      const where = file.replace(`${process.cwd()}/`, '');
      if (nesting > 0) {
        if (where.endsWith('.test.ts')) lastTestFile = where;
        return;
      }
      const owner = where.endsWith('.test.ts') ? where : (lastTestFile ?? where);
      perFile.set(owner, (perFile.get(owner) ?? 0) + (details?.duration_ms ?? 0));
    },
    render() {
      if (perFile.size === 0) return '';
      const files = [...perFile.entries()];
      const total = files.reduce((sum, [, ms]) => sum + ms, 0);
      const lines = ['Time per file (top-level tests, added up; files run side by side):'];
      for (const [file, ms] of files.sort(([a], [b]) => a.localeCompare(b)))
        lines.push(`${seconds(ms)}  ${file}`);
      lines.push(
        '',
        `Slowest ${Math.min(SLOWEST, files.length)} of ${files.length} files (${seconds(total).trim()} in all):`,
      );
      for (const [file, ms] of files.sort(([, a], [, b]) => b - a).slice(0, SLOWEST))
        lines.push(`${seconds(ms)}  ${file}`);
      return `${lines.join('\n')}\n`;
    },
  };
}
