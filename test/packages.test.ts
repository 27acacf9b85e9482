// Every package npm installs supports every Node.js release ferry says it runs on (the README, at its top:
// the least release package.json's engines allow, and each release CI tests in .ci/node-versions), so
// `npm ci` prints no EBADENGINE: a package whose `engines.node` leaves one out is pinned or overridden
// (package.json "overrides", with the reason in the commit). The packages only tests and benches use
// (`dev` in the lockfile) need only allow the Node running this test, which CI runs on each release.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';

// npm's own range rules, from the copy of semver that the tree holds (many packages depend on it).
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
const lock = JSON.parse(read('package-lock.json')) as {
  packages: Record<string, { version?: string; dev?: boolean; engines?: unknown }>;
};

/** The least release package.json allows, and each release .ci/node-versions has CI test. */
function releases(): string[] {
  const least = semver.minVersion(pkg.engines.node)?.version;
  assert.ok(least, `package.json engines.node ${pkg.engines.node}`);
  const ci = read('.ci/node-versions')
    .split('\n')
    .filter((line) => /^\d/.test(line))
    .map((line) => line.split(' ')[0] as string);
  assert.ok(ci.length > 0, '.ci/node-versions names a release');
  return [least, ...ci];
}

test('the README names the least Node.js release that package.json allows', () => {
  const least = semver.minVersion(pkg.engines.node)?.version ?? '';
  const [major, minor] = least.split('.');
  assert.match(read('README.md'), new RegExp(`Node\\.js ${major}\\.${minor} or newer`));
});

test("every installed package's engines allow each Node.js release ferry supports (no EBADENGINE at npm ci)", () => {
  const supported = releases();
  const refused: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    const range = (entry.engines as { node?: unknown } | undefined)?.node;
    if (path === '' || typeof range !== 'string') continue;
    const must = entry.dev ? [process.versions.node] : [...supported, process.versions.node];
    for (const version of must)
      if (!semver.satisfies(version, range))
        refused.push(
          `${path.replace(/^.*node_modules\//, '')}@${entry.version} needs node ${range}, not ${version}`,
        );
  }
  assert.deepEqual(refused, []);
});
