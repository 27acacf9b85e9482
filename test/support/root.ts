// The checkout's own directory, for tests that walk or write into it (src/ for the layering rules,
// test-artifacts/ for screenshots). scripts/test.mjs runs each test file compiled, from a tree of
// symbolic links elsewhere (scripts/test-tree.mjs), where a path taken from import.meta.url lands in
// that tree: package.json there is a link to the checkout's, so its real path names the checkout
// whichever way the file runs.
import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = dirname(realpathSync(fileURLToPath(new URL('../../package.json', import.meta.url))));
