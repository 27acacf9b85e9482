// The large file's long version (test/http/files-large.ts), run by `npm run test:long`: 1 GiB up and down
// through `ferry serve` to s3rver and to azurite at once, the server's RSS within the transfer memory
// budget; 165 to 250 s on a loaded 2-core machine. What 1 GiB adds over the short version
// (test/http/files-large.test.ts, in every run) is length, more of the same parts, not another code path.
// FERRY_TEST_LARGE_FILE_MIB sets another size, no less than the short version's.
import { largeFileTest, MiB } from '../http/files-large.js';

largeFileTest(Number(process.env.FERRY_TEST_LARGE_FILE_MIB ?? 1024) * MiB);
