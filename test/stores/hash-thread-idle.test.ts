// A hashing thread started and never asked anything must not keep the process alive (src/stores/shared/
// hash-thread.ts): a copy canceled before its first byte creates its source check's hash and discards
// it, and on Node 20 the thread's unref() made before it was online was forgotten, so test/http/cancel
// stayed alive after its last test until its time limit stopped it. The thread's port is a resource
// that holds the event loop (process.getActiveResourcesInfo) exactly while the thread is referenced.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashThreadOnline, ThreadedHash } from '../../src/stores/shared/hash-thread.js';
import { waitUntil } from '../support/wait.js';

const ports = () => process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length;

test('a hash created and discarded without a byte leaves the thread unreferenced once it is online', async () => {
  const before = ports();
  const hash = new ThreadedHash('md5');
  hash.discard();
  await hashThreadOnline();
  // Online, and asked nothing: nothing of it may hold the process (the 'online' handler runs first).
  await waitUntil(() => ports() === before, {
    what: 'the idle hashing thread to let the process go',
  });
  // And it still serves: a later hash refs it while waiting and lets it go again.
  const next = new ThreadedHash('md5');
  await next.update(Buffer.from('abc'));
  assert.equal((await next.digest()).toString('hex'), '900150983cd24fb0d6963f7d28e17f72');
  assert.equal(ports(), before);
});
