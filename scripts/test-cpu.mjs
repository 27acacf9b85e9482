// The CPU time a test file used, for scripts/test.mjs: loaded into every test process with --import, it
// writes {"cpu": MS} to FERRY_TEST_REPORT_FILE as the process exits. The figure is the process's own CPU
// time and that of every process it started and waited for (ferry serve, the CLI, chromium, the local
// servers: Linux adds a child's time to its parent's when the parent reaps it), read from /proc/self/stat.
// node --test runs the file in a child of its own, which loads this too: the runner keeps the largest
// figure, the parent's, which holds the child's, and the child's own (the test file's process without the
// processes it started) as `own`, the largest such figure too. On two cores, CPU time rather than wall time is what a
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
      const ticks = (from, to) => fields.slice(from, to + 1).reduce((sum, f) => sum + Number(f), 0);
      // Its own (utime, stime) and with its waited-for children (cutime, cstime) added.
      const own = ticks(11, 12) * TICK_MS;
      appendFileSync(out, `${JSON.stringify({ cpu: own + ticks(13, 14) * TICK_MS, own })}\n`);
    } catch {
      // no /proc: not Linux, no figure
    }
  });
}
