// Folders on this computer for the tests of `ferry cp` and `mv` with local paths: one to upload, and
// what a folder holds, to compare after a round trip.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { unique } from '../support/fixtures.js';

/** Every file under `dir`, relative path → bytes. */
export function tree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const full = join(at, name);
      if (statSync(full).isDirectory()) walk(full);
      else out.set(relative(dir, full).split('\\').join('/'), readFileSync(full));
    }
  };
  walk(dir);
  return out;
}

/** A folder of four files, nested, one of 3 MiB, names with a space and `[ab]`. */
export function makeSite(home: string): { dir: string; files: Map<string, Buffer> } {
  const dir = join(home, unique('site'));
  mkdirSync(join(dir, 'a b', 'deep'), { recursive: true });
  const files = new Map<string, Buffer>([
    ['index.html', Buffer.from('<p>hello</p>\n')],
    ['a b/[ab].txt', Buffer.from('just this one')],
    ['a b/deep/big.bin', randomBytes(3 * 1024 * 1024)],
    ['empty.txt', Buffer.alloc(0)],
  ]);
  for (const [rel, bytes] of files) writeFileSync(join(dir, ...rel.split('/')), bytes);
  return { dir, files };
}
