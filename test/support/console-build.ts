// The web console as the tests see it: dist/ui built from ui/src (scripts/build-ui.mjs).
import { spawnSync } from 'node:child_process';

/**
 * Builds dist/ui from ui/src, so a test sees the console as the source is now; not when the test
 * runner has built it already (scripts/test.mjs sets FERRY_TEST_CONSOLE_BUILT), since files that run
 * side by side would rebuild it under each other's pages (a rebuild empties dist/ui first).
 */
export function buildConsole(): void {
  if (process.env.FERRY_TEST_CONSOLE_BUILT === '1') return;
  const built = spawnSync(
    process.execPath,
    [new URL('../../scripts/build-ui.mjs', import.meta.url).pathname],
    { encoding: 'utf8' },
  );
  if (built.status !== 0) throw new Error(`scripts/build-ui.mjs failed: ${built.stderr}`);
}
