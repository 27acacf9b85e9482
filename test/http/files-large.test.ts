// The large file's short version (test/http/files-large.ts), in every run: MIN_LARGE_FILE, the least
// size that proves the bound (128 MiB on Node 20, 224 MiB on 22 and later: 64 MiB above what the server
// may grow by), up and down through `ferry serve` to s3rver and to azurite at once; 12 to 47 s on a
// loaded 2-core machine. test/long/files-large.test.ts streams 1 GiB.
//
// Shown to catch what it guards: with the upload (then in src/http/routes/files.ts, now src/domain/files.ts) collecting the whole
// body into one Buffer before passing it to the store, it failed on Node 20 with "the uploads grew the
// server by 439 MiB" (446 in another try; 64 MiB allowed); as it is, the server grew by 33 to 45 MiB.
import { largeFileTest, MIN_LARGE_FILE } from './files-large.js';

largeFileTest(MIN_LARGE_FILE);
