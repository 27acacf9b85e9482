// Each test file's time, from the events of node's test runner: the runner's own test for the file (at
// nesting 0, named by the file's path, absolute on Node 20 and relative on 24) completes with the
// file's whole time, modules loaded and every test and hook run. scripts/test-failures.mjs, the reporter,
// feeds it every event and writes `render()` to FERRY_TEST_TIMES_FILE at the end (a third reporter would
// push the runner past its listener limit); scripts/test.mjs prints that file after the run, so CI's log
// says where the suite's time goes (docs/testing.md, "Where the time goes").
// (The sum of a file's top-level tests, as this once added up, is not a file's: a suite declared by a
// helper, eachDatabase's in test/support/fixtures.ts, reports the helper's file, and with files run side
// by side its time went to whichever file's test had passed last.)
const SLOWEST = 15;

function seconds(ms) {
  return `${(ms / 1000).toFixed(1).padStart(7)} s`;
}

export function fileTimes() {
  const perFile = new Map();
  return {
    add(event) {
      if (event.type !== 'test:complete') return;
      const { nesting, file, name, details } = event.data;
      if (nesting !== 0 || !file || !name || !(file === name || file.endsWith(`/${name}`))) return;
      const where = file.replace(`${process.cwd()}/`, '');
      perFile.set(where, (perFile.get(where) ?? 0) + (details?.duration_ms ?? 0));
    },
    render() {
      if (perFile.size === 0) return '';
      const files = [...perFile.entries()];
      const total = files.reduce((sum, [, ms]) => sum + ms, 0);
      const lines = ['Time per file (start to end, modules loaded; files run side by side):'];
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
