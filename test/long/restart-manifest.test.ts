// The restart while a manifest is planned (test/engine/restart-manifest.ts), long version, run by
// `npm run test:long`: 12,000 keys, the size the test had in every run, with a server of its own; 5 to
// 25 s on a loaded 2-core machine. The short version (8,000 keys) runs in test/engine/restart.test.ts:
// the key count costs little time, but the stop must land before the planner's last batch.
import { manifestRestartTests } from '../engine/restart-manifest.js';

manifestRestartTests(12_000);
