#!/usr/bin/env node
// Builds dist/ (the server with tsc, the console with scripts/build-ui.mjs) and records when, so that
// `npm start` can skip the build when nothing changed (README, "Start-up"):
//   node scripts/build.mjs             build now (npm ci's `prepare`, `npm run build`)
//   node scripts/build.mjs --if-stale  build only when a source is newer than the last build (`prestart`)
//   node scripts/build.mjs --check [--root DIR]  say whether DIR (default: this checkout) needs a build
// A source is anything under src/ or ui/, the tsconfig files, package-lock.json and the build scripts.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const SOURCES = [
  'src',
  'ui',
  'tsconfig.json',
  'tsconfig.build.json',
  'package-lock.json',
  'scripts/build.mjs',
  'scripts/build-ui.mjs',
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

function build(root) {
  for (const [cmd, args] of [
    [process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json']],
    [process.execPath, [join(root, 'scripts', 'build-ui.mjs')]],
  ]) {
    const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
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
  build(root);
}
