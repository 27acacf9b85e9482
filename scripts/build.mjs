#!/usr/bin/env node
// Builds dist/ (the server, and the console with scripts/build-ui.mjs) and records when, so that
// `npm start` can skip the build when nothing changed (README, "Start-up"):
//   node scripts/build.mjs             build now (npm ci's `prepare`, `npm run build`)
//   node scripts/build.mjs --if-stale  build only when a source is newer than the last build (`prestart`)
//   node scripts/build.mjs --check [--root DIR]  say whether DIR (default: this checkout) needs a build
// A source is anything under src/ or ui/, the tsconfig files, package-lock.json and the build scripts.
// The server is each src/**/*.ts compiled on its own by esbuild, with a source map, as the test runner
// compiles its tree (scripts/test-tree.mjs): in well under a second, where tsc took about half a minute
// of CPU. Types are checked by `npm run test:static` (tsc over the server, the tests and the console),
// not by the build; tsconfig.json's isolatedModules and verbatimModuleSyntax keep each file compilable
// on its own. typebox and kysely are bundled into dist/vendor/ and imported from there
// (scripts/vendor.mjs says why).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildVendor, vendorPlugin } from './vendor.mjs';

const SOURCES = [
  'src',
  'ui',
  'tsconfig.json',
  'tsconfig.build.json',
  'package-lock.json',
  'scripts/build.mjs',
  'scripts/build-ui.mjs',
  'scripts/vendor.mjs',
];
export const STAMP = join('dist', '.build-stamp');

/** The newest modification time (ms) among the sources below `root`; 0 when there are none. */
function newestSource(root) {
  let newest = 0;
  const visit = (path) => {
    let info;
    try {
      info = statSync(path);
    } catch {
      return;
    }
    if (info.isDirectory()) {
      for (const name of readdirSync(path)) visit(join(path, name));
    } else if (info.mtimeMs > newest) {
      newest = info.mtimeMs;
    }
  };
  for (const source of SOURCES) visit(join(root, source));
  return newest;
}

/**
 * Why `root` needs a build, or undefined when its last build is newer than every source. A missing
 * stamp (never built, or a build that failed half-way) always needs one.
 */
export function staleReason(root) {
  let built;
  try {
    built = statSync(join(root, STAMP)).mtimeMs;
  } catch {
    return 'no finished build yet';
  }
  return newestSource(root) > built ? 'a source changed since the last build' : undefined;
}

/** Every .ts file under `dir` (not .d.ts). */
function typeScriptFiles(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath ?? e.path, e.name));
}

async function build(root) {
  const { build: esbuild } = await import('esbuild');
  const outdir = join(root, 'dist');
  const outbase = join(root, 'src');
  const vendorDir = join(outdir, 'vendor');
  await buildVendor(esbuild, root, vendorDir);
  await esbuild({
    entryPoints: typeScriptFiles(join(root, 'src')),
    outdir,
    outbase,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Each file on its own all the same: the plugin leaves every import external (scripts/vendor.mjs).
    bundle: true,
    plugins: [vendorPlugin({ outbase, outdir, vendorDir })],
    sourcemap: 'linked',
    tsconfig: join(root, 'tsconfig.build.json'),
    logLevel: 'error',
  });
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build-ui.mjs')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
  writeFileSync(join(root, STAMP), `${new Date().toISOString()}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const at = process.argv.indexOf('--root');
  const root = at > 0 ? (process.argv[at + 1] ?? '.') : new URL('..', import.meta.url).pathname;
  if (process.argv.includes('--check')) {
    process.stdout.write(`${staleReason(root) ?? 'up to date'}\n`);
    process.exit(0);
  }
  if (process.argv.includes('--if-stale')) {
    const reason = staleReason(root);
    // stderr: `npm start`'s stdout is the server's JSON log.
    if (reason === undefined) process.exit(0);
    process.stderr.write(`building dist/ (${reason})\n`);
  }
  await build(root);
}
