// Every route schema of the real app compiles (src/http/schema-compilers.ts compiles each one at its
// first request, so a schema that cannot compile would otherwise fail only when a request first needs
// it), and building the app compiles none of them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compiledCount, compilePending } from '../../src/http/schema-compilers.js';
import { startTestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';

let firstApp = true;

await eachDatabase('route schemas', (database) => {
  test('the app starts without compiling a schema, and every one of them compiles', async () => {
    const before = compiledCount();
    const t = await startTestApp(database);
    try {
      assert.equal(compiledCount(), before, 'building the app compiled a schema');
      // The first app of the process hands out every route's functions (a later one gets the same).
      const handedOut = compilePending();
      if (firstApp) assert.ok(handedOut >= 58, `only ${handedOut} functions were waiting to compile`);
      firstApp = false;
      const res = await t.request({ method: 'GET', url: '/v1/providers' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(compilePending(), 0);
    } finally {
      await t.close();
    }
  });
});
