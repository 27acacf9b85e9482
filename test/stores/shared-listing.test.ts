// The listing pieces the stores share: folders derived from a flat, name-ordered listing (the bucket
// stores), bucket/key paths, and the cursor paging loop. The conformance suite checks them through
// every store; these cases pin the edges a store's data seldom reaches.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { folderPath, objectPath, splitBucketPath } from '../../src/stores/shared/bucket-paths.js';
import { FolderChain } from '../../src/stores/shared/folders.js';
import { pages } from '../../src/stores/shared/paging.js';

describe('FolderChain', () => {
  const walk = (keys: string[]) => {
    const chain = new FolderChain();
    const out: string[] = [];
    for (const key of keys) {
      const { folders, file } = chain.next(key);
      out.push(...folders.map((f) => `${f}/`));
      if (file) out.push(key);
    }
    return out;
  };

  test('each folder between the listed folder and an object is listed once, before its first object', () => {
    assert.deepEqual(walk(['a/b/c.txt', 'a/b/d.txt', 'a/e.txt', 'f/g/h.txt', 'top.txt']), [
      'a/',
      'a/b/',
      'a/b/c.txt',
      'a/b/d.txt',
      'a/e.txt',
      'f/',
      'f/g/',
      'f/g/h.txt',
      'top.txt',
    ]);
  });

  test('a "folder/" marker makes its folder but is no file', () => {
    assert.deepEqual(walk(['empty/', 'x/y/', 'x/y/z.txt']), ['empty/', 'x/', 'x/y/', 'x/y/z.txt']);
  });

  test('a key with an empty segment lists the folders before it and is no file', () => {
    assert.deepEqual(walk(['a//b.txt', 'a//c/d.txt', 'a/e.txt', '/x.txt']), ['a/', 'a/e.txt']);
  });
});

describe('bucket paths', () => {
  test('the first "/" splits the bucket from the key, which is kept verbatim', () => {
    assert.deepEqual(splitBucketPath('b'), { bucket: 'b', key: '' });
    assert.deepEqual(splitBucketPath('b/a//c\\d.txt'), { bucket: 'b', key: 'a//c\\d.txt' });
  });

  test('a leading or trailing "/" is refused, and an object needs a bucket and a key', () => {
    assert.throws(() => folderPath('gcs', '/b/a'), /gcs: path "\/b\/a" must not start or end with "\/"/);
    assert.throws(() => folderPath('gcs', 'b/a/'), /must not start or end/);
    assert.deepEqual(folderPath('gcs', 'b'), { bucket: 'b', key: '' });
    assert.throws(
      () => objectPath('azureblob', 'b', 'a blob (container/name)'),
      /azureblob: "b" does not name a blob/,
    );
    assert.deepEqual(objectPath('gcs', 'b/k', 'an object'), { bucket: 'b', key: 'k' });
  });
});

describe('pages', () => {
  test('asks for each next page with the cursor the last one named, until one names none', async () => {
    const asked: Array<string | undefined> = [];
    const book: Record<string, { items: number[]; next?: string }> = {
      first: { items: [1, 2], next: 'p2' },
      p2: { items: [3], next: 'p3' },
      p3: { items: [4], next: '' },
    };
    const seen: number[] = [];
    for await (const page of pages(
      async (cursor: string | undefined) => {
        asked.push(cursor);
        return book[cursor ?? 'first'] as { items: number[]; next?: string };
      },
      (page) => page.next,
    )) {
      seen.push(...page.items);
    }
    assert.deepEqual(asked, [undefined, 'p2', 'p3']);
    assert.deepEqual(seen, [1, 2, 3, 4]);
  });

  test('a page is asked for only once the previous one has been consumed', async () => {
    let fetched = 0;
    const listed = pages(
      async () => {
        fetched++;
        return fetched;
      },
      (n) => (n < 3 ? String(n) : undefined),
    );
    assert.equal(fetched, 0);
    await listed.next();
    assert.equal(fetched, 1);
    await listed.return(undefined);
    assert.equal(fetched, 1);
  });
});
