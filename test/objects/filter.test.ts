// Filters (docs/api.md, "Filters"): parsing as units, and listing with a filter against s3rver, with the
// store's list calls recorded to show that a folder an exclude covers is never listed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isFerryError } from '../../src/errors.js';
import { compileFilter, FILTER_MAX_GLOBS, listFiltered, parseFilter } from '../../src/objects/filter.js';
import { compileGlob, DEFAULT_PATTERN_LIMITS } from '../../src/objects/glob.js';
import { expandSources } from '../../src/objects/patterns.js';
import type { ListOptions, Store } from '../../src/stores/contract.js';
import { put, type Servers, startServers } from './harness.js';

let servers: Servers;
let store: Store;
let bucket: string;
const lists: { path: string; recursive: boolean }[] = [];

const KEYS: Record<string, number> = {
  'top.txt': 10,
  'big.bin': 5000,
  'logs/1.log': 3,
  'logs/deep/2.log': 3,
  'data/a.csv': 20,
  'data/tmp/x.csv': 20,
  // s3rver leaves out of a delimited listing a folder that holds only folders: this file keeps
  // data/keep/ in data/'s listing, as S3 itself would show it anyway.
  'data/keep/k.csv': 20,
  'data/keep/tmp/y.csv': 20,
  'other/tmp/z.csv': 20,
};

before(async () => {
  servers = await startServers();
  const real = servers.s3();
  bucket = await servers.newBucket();
  for (const [key, size] of Object.entries(KEYS)) await put(real, `${bucket}/${key}`, Buffer.alloc(size, 1));
  store = {
    ...real,
    provider: real.provider,
    account: real.account,
    features: real.features,
    list(path: string, options?: ListOptions) {
      lists.push({ path, recursive: options?.recursive ?? false });
      return real.list(path, options);
    },
    stat: (p, o) => real.stat(p, o),
    read: (p, o) => real.read(p, o),
    write: (p, b, o) => real.write(p, b, o),
    delete: (p, o) => real.delete(p, o),
    close: () => real.close(),
  };
});

after(async () => {
  await servers?.close();
});

const parse = (input: Record<string, unknown>) => parseFilter(input, DEFAULT_PATTERN_LIMITS);

function refused(input: Record<string, unknown>, message: RegExp): void {
  assert.throws(
    () => parse(input),
    (err: unknown) => isFerryError(err, 'invalid') && message.test(err.message),
    JSON.stringify(input),
  );
}

async function listed(input: Record<string, unknown>): Promise<string[]> {
  const filter = compileFilter(parse(input));
  const out: string[] = [];
  for await (const entry of listFiltered(store, bucket, { recursive: true, filter }))
    out.push(entry.path.slice(bucket.length + 1));
  return out.sort();
}

describe('parseFilter', () => {
  test('every rule is checked and named; times become epoch milliseconds', () => {
    assert.deepEqual(
      parse({
        include: ['*.txt'],
        exclude: ['logs/**'],
        min_size: 0,
        max_size: 10,
        modified_after: '2026-01-01T00:00:00Z',
        modified_before: '2026-01-01T01:00:00.5+01:00',
      }),
      {
        include: ['*.txt'],
        exclude: ['logs/**'],
        min_size: 0,
        max_size: 10,
        modified_after: Date.UTC(2026, 0, 1),
        modified_before: Date.UTC(2026, 0, 1, 0, 0, 0, 500),
      },
    );
    refused({ include: '*.txt' }, /^filter\.include must be a list of globs$/);
    refused({ exclude: [''] }, /^filter\.exclude\[0\] must be a non-empty glob$/);
    refused({ include: ['a', 7] }, /^filter\.include\[1\]/);
    refused({ include: Array(FILTER_MAX_GLOBS + 1).fill('*') }, /at most 100 globs/);
    refused({ include: ['x'.repeat(1025)] }, /filter\.include\[0\]: .*FERRY_PATTERN_MAX_LENGTH/);
    refused(
      { exclude: ['*'.repeat(1).concat('/?'.repeat(40))] },
      /filter\.exclude\[0\]: .*FERRY_PATTERN_MAX_WILDCARDS/,
    );
    refused({ min_size: -1 }, /^filter\.min_size must be a whole number/);
    refused({ max_size: 1.5 }, /^filter\.max_size must be a whole number/);
    refused({ min_size: 2, max_size: 1 }, /min_size \(2\) is larger than filter\.max_size \(1\)/);
    refused({ modified_after: '2026-01-01' }, /^filter\.modified_after must be an RFC 3339 time/);
    refused({ modified_before: '2026-13-45T99:00:00Z' }, /^filter\.modified_before must be an RFC 3339 time/);
    refused(
      { modified_after: '2026-01-02T00:00:00Z', modified_before: '2026-01-01T00:00:00Z' },
      /modified_after must be earlier/,
    );
  });

  test('the worst filter allowed decides a long name within length × automaton states, letting the event loop run', async () => {
    const worst = Array.from({ length: FILTER_MAX_GLOBS }, (_, i) => `${'*a'.repeat(16)}${i}`);
    const filter = compileFilter(parse({ include: worst, exclude: worst }));
    assert.ok(filter);
    const name = 'a'.repeat(1000);
    // Its cost counted in automaton steps (Filter.work), not timed. The name matches no include, so no
    // exclude is tried: at most every include stepping all its states over every character.
    const most = worst.reduce((sum, glob) => sum + name.length * compileGlob(glob).size, 0);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const passed = await filter.passes(name, { size: 1 });
    clearInterval(timer);
    assert.equal(passed, false);
    assert.ok(filter.work <= most, `${filter.work} steps, at most ${most}`);
    assert.ok(filter.work > most / 2, `${filter.work} steps: not the worst case it should be`);
    assert.ok(ticks > 0, 'the event loop ran while matching');
  });
});

describe('listing with a filter on s3rver', () => {
  test('include, exclude and sizes: an object must pass every rule', async () => {
    assert.deepEqual(await listed({ include: ['**/*.csv'] }), [
      'data/a.csv',
      'data/keep/k.csv',
      'data/keep/tmp/y.csv',
      'data/tmp/x.csv',
      'other/tmp/z.csv',
    ]);
    assert.deepEqual(await listed({ include: ['**/*.csv', '*.txt'], exclude: ['**/tmp/**'] }), [
      'data/a.csv',
      'data/keep/k.csv',
      'top.txt',
    ]);
    assert.deepEqual(await listed({ min_size: 10, max_size: 10 }), ['top.txt']);
    assert.deepEqual(await listed({ min_size: 4000 }), ['big.bin']);
  });

  test('modified_after and modified_before bound the listing time', async () => {
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    assert.equal((await listed({ modified_after: hourAgo, modified_before: inAnHour })).length, 9);
    assert.deepEqual(await listed({ modified_after: inAnHour }), []);
    assert.deepEqual(await listed({ modified_before: hourAgo }), []);
  });

  test('an exclude covering whole folders walks folder by folder and never lists those folders', async () => {
    lists.length = 0;
    assert.deepEqual(await listed({ exclude: ['logs/**', '*/tmp/**'] }), [
      'big.bin',
      'data/a.csv',
      'data/keep/k.csv',
      'data/keep/tmp/y.csv',
      'top.txt',
    ]);
    const paths = lists.map((l) => l.path);
    assert.ok(
      lists.every((l) => !l.recursive),
      'no recursive listing',
    );
    for (const skipped of ['logs', 'logs/deep', 'data/tmp', 'other/tmp'])
      assert.ok(!paths.includes(`${bucket}/${skipped}`), `${skipped} was listed: ${paths.join(' ')}`);
    assert.ok(paths.includes(`${bucket}/data/keep/tmp`), '*/tmp/** covers one level only');
  });

  test('without such an exclude one recursive listing is made, tested entry by entry', async () => {
    lists.length = 0;
    assert.deepEqual(await listed({ exclude: ['logs/*.log'] }), [
      'big.bin',
      'data/a.csv',
      'data/keep/k.csv',
      'data/keep/tmp/y.csv',
      'data/tmp/x.csv',
      'logs/deep/2.log',
      'other/tmp/z.csv',
      'top.txt',
    ]);
    assert.deepEqual(lists, [{ path: bucket, recursive: true }]);
  });

  test('a pattern with a filter: globs relative to the pattern base, excluded folders unlisted', async () => {
    lists.length = 0;
    const filter = compileFilter(parse({ exclude: ['tmp/**'], min_size: 1 }));
    const out: string[] = [];
    for await (const e of expandSources(store, `${bucket}/data/**`, undefined, false, filter))
      out.push(e.path);
    assert.deepEqual(out.sort(), [
      `${bucket}/data/a.csv`,
      `${bucket}/data/keep/k.csv`,
      `${bucket}/data/keep/tmp/y.csv`,
    ]);
    assert.ok(!lists.some((l) => l.path === `${bucket}/data/tmp`));
  });
});
