// Runs s3rver (test/support/s3rver.ts: any access key, path-style, a fresh directory) as its own
// process and prints one line of JSON, {"endpoint": "http://127.0.0.1:PORT"}, when it listens. It must
// run under `node --openssl-legacy-provider` (docs/testing.md: s3rver's continuation tokens use DES,
// so listings past 1,000 keys fail otherwise); bench/support/processes.ts starts it that way.
// SIGTERM or SIGINT closes it and removes its directory.
import { startS3rver } from '../../test/support/s3rver.js';

const s3 = await startS3rver();
process.stdout.write(`${JSON.stringify({ endpoint: s3.endpoint })}\n`);
const stop = () => {
  s3.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
