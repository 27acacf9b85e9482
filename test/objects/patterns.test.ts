// Glob patterns in source paths: isPattern and splitting as units (the matcher itself: glob.test.ts),
// and expandSources against s3rver with nested folders, dot files and awkward names, plus a folder
// store (in memory) for patterns at the root.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isFerryError } from '../../src/errors.js';
import { expandSources, isPattern, splitPattern } from '../../src/objects/patterns.js';
import type { Entry, ListOptions, Store } from '../../src/stores/contract.js';
import { put, type Servers, startServers } from './harness.js';

let servers: Servers;
let store: Store;
let bucket: string;
const lists: { path: string; recursive: boolean }[] = [];

const KEYS = [
  'top.txt',
  '.hidden.txt',
  'logs/2024-01.gz',
  'logs/2024-02.gz',
  'logs/2025-01.gz',
  'logs/.keep',
  'logs/readme.md',
  'logs/old/2023-12.gz',
  'logs/old/deeper/2022-01.gz',
  'a/x.txt',
  'b/x.txt',
  'b/c/x.txt',
  'odd/a(1)+b.txt',
  'odd/a*b.txt',
  'odd/[draft] plan.txt',
  'odd/é 100%.txt',
];

before(async () => {
  servers = await startServers();
  const real = servers.s3();
  bucket = await servers.newBucket();
  for (const key of KEYS) await put(real, `${bucket}/${key}`, Buffer.from(key));
  // Records how the pattern code lists, to check it lists no more than it must.
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

async function expand(pattern: string, on: Store = store): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of expandSources(on, pattern)) out.push(entry.path);
  return out;
}

async function matches(pattern: string): Promise<string[]> {
  const prefix = `${bucket}/`;
  return (await expand(`${bucket}/${pattern}`)).map((p) => p.slice(prefix.length)).sort();
}

describe('isPattern and splitPattern', () => {
  test('a path with an unescaped * ? [ or { is a pattern; anything else is a plain path', () => {
    for (const p of ['b/*.txt', 'b/**', 'b/file?.txt', 'b/[ab].txt', 'b/{a,b}.txt', 'b/x/*/y']) {
      assert.equal(isPattern(p), true, p);
    }
    for (const p of ['b/file.txt', 'b/a(1)+b.txt', 'b/100%.txt', 'b/\\*.txt', 'b/é #.txt', '']) {
      assert.equal(isPattern(p), false, p);
    }
  });

  test('the base is the literal leading folders; recursion only when the rest crosses a folder', () => {
    assert.deepEqual(splitPattern('b/logs/*.gz'), { base: 'b/logs', glob: '*.gz', recursive: false });
    assert.deepEqual(splitPattern('b/logs/*/x.gz'), { base: 'b/logs', glob: '*/x.gz', recursive: true });
    assert.deepEqual(splitPattern('b/**'), { base: 'b', glob: '**', recursive: true });
    assert.deepEqual(splitPattern('*.txt'), { base: '', glob: '*.txt', recursive: false });
    // Escapes in the literal part resolve; the glob part is kept as written, escapes and all.
    assert.deepEqual(splitPattern('b/a\\*b/x(1)\\?*'), { base: 'b/a*b', glob: 'x(1)\\?*', recursive: false });
  });
});

describe('expandSources on s3rver', () => {
  test('* matches within one folder, dot files included, and lists that folder only', async () => {
    lists.length = 0;
    assert.deepEqual(await matches('*.txt'), ['.hidden.txt', 'top.txt']);
    assert.deepEqual(lists, [{ path: bucket, recursive: false }]);
    assert.deepEqual(await matches('logs/*'), [
      'logs/.keep',
      'logs/2024-01.gz',
      'logs/2024-02.gz',
      'logs/2025-01.gz',
      'logs/readme.md',
    ]);
  });

  test('** crosses folders (none included) and lists recursively from the deepest literal folder', async () => {
    lists.length = 0;
    assert.deepEqual(await matches('logs/**/*.gz'), [
      'logs/2024-01.gz',
      'logs/2024-02.gz',
      'logs/2025-01.gz',
      'logs/old/2023-12.gz',
      'logs/old/deeper/2022-01.gz',
    ]);
    assert.deepEqual(lists, [{ path: `${bucket}/logs`, recursive: true }]);
    assert.deepEqual(await matches('logs/old/**'), ['logs/old/2023-12.gz', 'logs/old/deeper/2022-01.gz']);
  });

  test('? [..] [!..] and {a,b} work; folders are never yielded', async () => {
    assert.deepEqual(await matches('logs/202?-01.gz'), ['logs/2024-01.gz', 'logs/2025-01.gz']);
    assert.deepEqual(await matches('logs/2024-0[2-9].gz'), ['logs/2024-02.gz']);
    assert.deepEqual(await matches('logs/202[!4]-*'), ['logs/2025-01.gz']);
    assert.deepEqual(await matches('{a,b}/x.txt'), ['a/x.txt', 'b/x.txt']);
    assert.deepEqual(await matches('{a,b/c}/x.txt'), ['a/x.txt', 'b/c/x.txt']);
    assert.deepEqual(await matches('*'), ['.hidden.txt', 'top.txt']);
    assert.deepEqual(await matches('*/*'), [
      'a/x.txt',
      'b/x.txt',
      'logs/.keep',
      'logs/2024-01.gz',
      'logs/2024-02.gz',
      'logs/2025-01.gz',
      'logs/readme.md',
      'odd/[draft] plan.txt',
      'odd/a(1)+b.txt',
      'odd/a*b.txt',
      'odd/é 100%.txt',
    ]);
  });

  test('names with ( ) + % é spaces match literally; [*] and \\* name a literal star', async () => {
    assert.deepEqual(await matches('odd/a(1)+*'), ['odd/a(1)+b.txt']);
    assert.deepEqual(await matches('odd/é 100%*'), ['odd/é 100%.txt']);
    assert.deepEqual(await matches('odd/a[*]b.txt'), ['odd/a*b.txt']);
    assert.deepEqual(await matches('odd/a\\*b.*'), ['odd/a*b.txt']);
    assert.deepEqual(await matches('odd/[[]draft] *'), ['odd/[draft] plan.txt']);
  });

  test('entries come in listing order, with the listing’s metadata', async () => {
    const entries: Entry[] = [];
    for await (const entry of expandSources(store, `${bucket}/logs/*.gz`)) entries.push(entry);
    const listed: string[] = [];
    for await (const entry of store.list(`${bucket}/logs`)) {
      if (!entry.isDir && entry.path.endsWith('.gz')) listed.push(entry.path);
    }
    assert.deepEqual(
      entries.map((e) => e.path),
      listed,
    );
    assert.equal(entries[0]?.name, '2024-01.gz');
    assert.equal(entries[0]?.size, 'logs/2024-01.gz'.length);
    assert.equal(entries[0]?.isDir, false);
  });

  test('a pattern matching nothing yields nothing', async () => {
    assert.deepEqual(await matches('logs/*.zip'), []);
  });

  test('a plain path is that one object (stat), not_found when missing', async () => {
    const entries: Entry[] = [];
    for await (const entry of expandSources(store, `${bucket}/odd/a(1)+b.txt`)) entries.push(entry);
    assert.equal(entries.length, 1);
    assert.equal(entries[0]?.path, `${bucket}/odd/a(1)+b.txt`);
    assert.equal(entries[0]?.name, 'a(1)+b.txt');
    assert.equal(entries[0]?.size, 'odd/a(1)+b.txt'.length);
    assert.equal(entries[0]?.isDir, false);
    await assert.rejects(expand(`${bucket}/missing.txt`), (err: unknown) => isFerryError(err, 'not_found'));
    // A folder is not an object.
    await assert.rejects(expand(`${bucket}/logs`), (err: unknown) => isFerryError(err, 'not_found'));
  });

  test('a pattern in the bucket segment is invalid', async () => {
    for (const pattern of ['*/logs/*.gz', 'ferry-*/x', '**', '{a,b}/x']) {
      await assert.rejects(expand(pattern), (err: unknown) => isFerryError(err, 'invalid'), pattern);
    }
  });

  test('a pattern under a missing bucket is the listing’s not_found', async () => {
    await assert.rejects(expand('no-such-bucket-ferry/*.txt'), (err: unknown) =>
      isFerryError(err, 'not_found'),
    );
  });
});

describe('expandSources on a folder store', () => {
  // A folder store (no bucket segment): a pattern may start at the root.
  const files = ['a.txt', 'dir/b.txt', 'dir/sub/c.txt'];
  const folderStore = {
    provider: 'dropbox',
    account: 'memory',
    features: {
      bucketListing: false,
      hashes: [],
      upload: { minPartSize: 1, maxPartSize: 1, maxParts: 1, singleRequestMax: 1 },
    },
    async *list(path: string, options?: ListOptions): AsyncIterable<Entry> {
      lists.push({ path, recursive: options?.recursive ?? false });
      const prefix = path === '' ? '' : `${path}/`;
      for (const file of files) {
        if (!file.startsWith(prefix)) continue;
        const rest = file.slice(prefix.length);
        if (!options?.recursive && rest.includes('/')) continue;
        yield { name: rest.split('/').pop() as string, path: file, size: 1, isDir: false };
      }
    },
  } as unknown as Store;

  test('a root pattern lists the root', async () => {
    lists.length = 0;
    assert.deepEqual(await expand('*.txt', folderStore), ['a.txt']);
    assert.deepEqual(lists, [{ path: '', recursive: false }]);
    assert.deepEqual(await expand('**/*.txt', folderStore), files);
  });
});

describe('expansion lets the event loop run', () => {
  // 8 names of 4096 `a`s against `*` and 4000 `a`s then `b` (a pattern accepted under raised limits,
  // as the worker compiles under the ceilings): the worst a match can be, about 16 million automaton
  // steps per name, so each name takes many milliseconds. Timers must keep firing meanwhile:
  // expansion pauses between names and inside a name. Time is CPU time (this process's), so that a
  // loaded machine, which delays every tick, cannot fail the test.
  const names = Array.from({ length: 8 }, (_, i) => `${String(i).padStart(3, '0')}${'a'.repeat(4093)}`);
  const worst = `dir/*${'a'.repeat(4000)}`;
  const bigStore = {
    provider: 'dropbox',
    account: 'memory',
    features: {
      bucketListing: false,
      hashes: [],
      upload: { minPartSize: 1, maxPartSize: 1, maxParts: 1, singleRequestMax: 1 },
    },
    // One page holding everything: the entries follow each other without the event loop running.
    async *list(): AsyncIterable<Entry> {
      for (const name of names) yield { name, path: `dir/${name}`, size: 1, isDir: false };
    },
  } as unknown as Store;
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };

  test('the most CPU time between two timer ticks stays short while a worst-case pattern expands', async () => {
    // Once first, so that compiling the matcher's code to machine code (whose threads count too) is done.
    await expand(`${worst}b`, bigStore);
    let longest = 0;
    let last = cpuMs();
    const ticker = setInterval(() => {
      const now = cpuMs();
      longest = Math.max(longest, now - last);
      last = now;
    }, 1);
    const started = cpuMs();
    try {
      assert.deepEqual(await expand(`${worst}b`, bigStore), []);
      assert.equal((await expand(worst, bigStore)).length, names.length);
    } finally {
      clearInterval(ticker);
    }
    // The stretch since the last tick counts too (with no pause at all, it is the whole expansion).
    longest = Math.max(longest, cpuMs() - last);
    const took = cpuMs() - started;
    assert.ok(took > 1000, `expansion took ${took.toFixed(0)} ms of CPU: not the worst case it should be`);
    // The matcher lets the loop run every 4 ms (src/util/slicer.ts); the process's CPU time also counts
    // the garbage collector's threads, whose pauses reach tens of milliseconds on a loaded machine
    // (58 ms seen). Held at once, the expansion would be all of `took` (seconds).
    assert.ok(longest < 100, `the event loop was held for ${longest.toFixed(0)} ms of CPU at once`);
  });
});
