// The CPU time a test file used, for scripts/test.mjs: loaded into every test process with --import, it
// writes {"cpu": MS} to FERRY_TEST_REPORT_FILE as the process exits. The figure is the process's own CPU
// time and that of every process it started and waited for (ferry serve, the CLI, chromium, the local
// servers: Linux adds a child's time to its parent's when the parent reaps it), read from /proc/self/stat.
// node --test runs the file in a child of its own, which loads this too: the runner keeps the largest
// figure, the parent's, which holds the child's. On two cores, CPU time rather than wall time is what a
// file costs the run beside it (docs/testing.md, "Where the time goes").
import { appendFileSync, readFileSync } from 'node:fs';

const out = process.env.FERRY_TEST_REPORT_FILE;
// Linux reports these in clock ticks, 100 a second on every kernel configuration Node builds for.
const TICK_MS = 10;

if (out) {
  process.on('exit', () => {
    try {
      const stat = readFileSync('/proc/self/stat', 'utf8');
      // pid (comm) state ...: the fields after the last ')', from the third on; utime is the 14th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
      appendFileSync(out, `${JSON.stringify({ cpu: ticks * TICK_MS })}\n`);
    } catch {
      // no /proc: not Linux, no figure
    }
  });
}
