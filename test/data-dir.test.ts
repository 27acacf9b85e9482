// docs/api.md, "Files on disk": `ferry serve` on an empty data dir makes the dir 0700 and every file
// in it 0600 (the SQLite database with its -wal and -shm, master.key, bootstrap-key, the worker's slot), whatever the
// umask it was started with; a data dir that exists with wider permissions is warned about at start
// (one line naming the dir and its mode) and left as it is. On both databases.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createSchema } from './support/databases.js';
import { eachDatabase } from './support/fixtures.js';
import { killAll, startFerry } from './support/processes.js';

/** `ferry serve`, listening: given longer than startServe's 30 s, as a loaded machine needs for a cold start. */
async function serve(name: string, env: Record<string, string>) {
  const server = startFerry(name, ['serve'], env);
  await server.waitForLine(/"ferry is listening"/, 120_000);
  return server;
}

const mode = (path: string) => `0${(statSync(path).mode & 0o777).toString(8)}`;

await eachDatabase('files on disk', (database) => {
  const parent = mkdtempSync(join(tmpdir(), 'ferry-data-dir-'));
  const schemas: Array<{ drop(): Promise<void> }> = [];
  after(async () => {
    await killAll();
    await Promise.all(schemas.map((s) => s.drop()));
    rmSync(parent, { recursive: true, force: true });
  });

  const env = async (dataDir: string): Promise<Record<string, string>> => {
    // A port of the system's choice: nothing here asks the server anything, its files are the test.
    const base = { FERRY_DATA_DIR: dataDir, FERRY_PORT: '0' };
    if (database.name === 'sqlite') return base;
    const schema = await createSchema();
    schemas.push(schema);
    return { ...base, FERRY_DATABASE_URL: schema.url };
  };

  test('serve on an empty data dir makes it 0700 and every file in it 0600', async () => {
    // The test runner's umask (022 here) would make files 0644 and dirs 0755 by default.
    process.umask(0o022);
    const dataDir = join(parent, 'fresh', 'data');
    const server = await serve('fresh', { ...(await env(dataDir)), FERRY_MASTER_KEY: '' });
    const files = ['master.key', 'bootstrap-key', 'worker-0.lock'];
    if (database.name === 'sqlite') files.push('ferry.db', 'ferry.db-wal', 'ferry.db-shm');
    const modes = Object.fromEntries([
      ['dir', mode(dataDir)],
      ...files.map((f) => [f, mode(join(dataDir, f))]),
    ]);
    assert.deepEqual(
      modes,
      Object.fromEntries([['dir', '0700'], ...files.map((f) => [f, '0600'])]),
      server.log(),
    );
    assert.ok(!server.lines.some((l) => /data dir can be read/.test(l)), server.log());
    await server.stop();
  });

  test('an existing data dir open to others is warned about at start, once, and left as it is', async () => {
    const dataDir = join(parent, 'shared');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const server = await serve('shared', await env(dataDir));
    const warnings = server.lines.filter((l) => /data dir can be read/.test(l));
    assert.equal(warnings.length, 1, server.log());
    const line = JSON.parse(warnings[0] as string);
    assert.equal(line.level, 40, server.log());
    assert.equal(line.dataDir, dataDir);
    assert.equal(line.mode, '0755');
    assert.equal(mode(dataDir), '0755');
    await server.stop();
  });
});
