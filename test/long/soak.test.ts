// The soak's long version (test/engine/soak.ts), run by `npm run test:long`: 2 minutes of the soak's load
// on each database at once, sampled every 10 s, the first 30 s the warm-up; its thirds are 3 samples each
// and end 60 s apart. The file takes 125 to 140 s on a loaded 2-core machine. RSS may grow by 24 MiB
// between the thirds: a clean server's peaks climb by at most about 16 MiB (test/engine/soak.ts). A leak
// of 0.5 MiB/s with an fd every 5 s, put into the server for a try, failed all three checks (+29 MiB,
// fds +13 and +21). test/engine/soak.test.ts is its short version, in every run.
import { soakTests } from '../engine/soak.js';

await soakTests({ durationMs: 120_000, sampleEveryMs: 10_000, warmupSamples: 3, rssGrowthMiB: 24 });
