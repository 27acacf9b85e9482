// The test files as plain JavaScript, for scripts/test.mjs (docs/testing.md, "How a file runs").
//
// A test process that loads TypeScript through a loader (tsx) pays for it on every module it imports,
// node_modules included: Node 20 runs loader hooks on a thread of their own and asks it about each
// module, and the server's ~1,300 modules cost about 2.3 s of CPU more per process that way than as
// JavaScript (1.2 s of it for having hooks at all). The suite starts about 270 such processes per CI run.
// So the runner compiles src/, test/ and bench/ (the soak's load, which a test runs) once per run, with esbuild (the compiler tsx itself uses, with
// the same tsconfig.json), into a tree that mirrors the checkout:
//   <tree>/{src,test,bench}/**/x.js          each .ts file compiled, with a source map that names the
//                                            .ts file in the checkout, so a stack trace and a failing
//                                            test's location point at the real file and line
//   every other file of those folders        a symbolic link to it (fixtures, the .ts files themselves)
//   <tree>/vendor/                           typebox and kysely bundled, imported from there by the
//                                            compiled files (scripts/vendor.mjs says why)
//   every other top-level entry              a symbolic link (node_modules, dist, docs, package.json...)
// so every relative path a test or the server takes from import.meta.url lands where it would in the
// checkout. Tests that need the checkout's own directory (to walk src/, say) take ROOT from
// test/support/root.ts, which is the checkout's in both ways of running.
import { mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { build } from 'esbuild';
import { buildVendor, vendorPlugin } from './vendor.mjs';

/** The folders of TypeScript a test may import; the tree mirrors every other top-level entry by a link. */
const COMPILED = ['src', 'test', 'bench'];

/** Builds the tree of `root` (the checkout) at `dir`, which must not exist yet; resolves with `dir`. */
export async function buildTestTree(root, dir) {
  mkdirSync(dir, { recursive: true });
  for (const top of readdirSync(root)) {
    if (!COMPILED.includes(top)) symlinkSync(join(root, top), join(dir, top));
  }
  const entryPoints = [];
  const visit = (from) => {
    const to = join(dir, relative(root, from));
    mkdirSync(to, { recursive: true });
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      const path = join(from, entry.name);
      if (entry.isDirectory()) visit(path);
      else {
        symlinkSync(path, join(to, entry.name));
        if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) entryPoints.push(path);
      }
    }
  };
  for (const folder of COMPILED) visit(join(root, folder));
  const vendorDir = join(dir, 'vendor');
  await buildVendor(build, root, vendorDir);
  await build({
    entryPoints,
    outdir: dir,
    outbase: root,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Each file on its own all the same: the plugin leaves every import external (scripts/vendor.mjs).
    bundle: true,
    plugins: [vendorPlugin({ outbase: root, outdir: dir, vendorDir })],
    sourcemap: 'linked',
    logLevel: 'error',
  });
  return dir;
}

/** Where `file` (a path relative to the checkout, test/....ts) is in the tree at `dir`. */
export function inTree(dir, file) {
  return join(dir, file.replace(/\.ts$/, '.js'));
}
