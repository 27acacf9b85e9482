// A ferry server on SQLite beside other processes that open its database: the local CLI (`ferry keys
// create`, the operator's door) and any reader. A server started over the -wal and -shm files of a
// killed predecessor used to drop its own lock on the -shm file while opening (it opened and closed
// those files to tighten their mode); the next process to open the database then took itself for the
// only one, reset the -shm file, and the server died of SIGBUS. SQLite only: PostgreSQL has no such files.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { apiCall, killAll, startFerry, startServe } from '../support/processes.js';

after(() => killAll());

test('a server restarted after SIGKILL lives on while the CLI and readers open its database', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ferry-sqlite-files-'));
  try {
    const env = {
      FERRY_DATA_DIR: dataDir,
      FERRY_MASTER_KEY: randomBytes(32).toString('base64'),
    };
    const first = await startServe('first', env);
    const token = readFileSync(join(dataDir, 'bootstrap-key'), 'utf8').trim();
    assert.equal((await apiCall(first.origin, token, 'GET', '/v1/locations')).status, 200);
    assert.equal((await first.kill()).signal, 'SIGKILL');
    const file = join(dataDir, 'ferry.db');
    assert.ok(existsSync(`${file}-shm`), 'the killed server left its -shm file');
    // An older ferry left them readable by others: the restart tightens them, by path.
    chmodSync(`${file}-shm`, 0o644);

    const server = await startServe('restarted', env);
    // Its own port, not the first one's.
    const { origin } = server;
    assert.equal(statSync(`${file}-shm`).mode & 0o777, 0o600);
    // What tells the next process it is not alone: the server's lock on the -shm file. Without it, that
    // process resets the file under the server's mapping, and the server dies of SIGBUS at its next
    // query if the reset shrank the file (a race this test cannot force; the lock it can see).
    if (existsSync('/proc/locks')) {
      const inode = statSync(`${file}-shm`).ino;
      const held = readFileSync('/proc/locks', 'utf8')
        .split('\n')
        .filter((line) => line.includes(` ${server.pid} `) && line.includes(`:${inode} `));
      assert.ok(held.length > 0, `the restarted server (pid ${server.pid}) holds no lock on ferry.db-shm`);
    }
    for (let i = 0; i < 3; i++) {
      const writer = new Database(file);
      writer.prepare('select count(*) from api_keys').get();
      writer.close();

      const reader = new Database(file, { readonly: true });
      reader.prepare('select count(*) from workspaces').get();
      reader.close();
      assert.equal((await apiCall(origin, token, 'GET', '/v1/locations')).status, 200);
    }
    const cli = startFerry('keys create', ['keys', 'create', '--workspace', 'ops', '--json'], env);
    assert.deepEqual(await cli.exited, { code: 0, signal: null }, cli.log());
    const created = JSON.parse(cli.lines.find((l) => l.startsWith('{')) ?? '{}') as { token: string };
    assert.equal((await apiCall(origin, created.token, 'GET', '/v1/tokens')).status, 200);
    assert.equal((await apiCall(origin, token, 'GET', '/v1/locations')).status, 200);
    assert.equal(server.child.exitCode, null, server.log());
    assert.equal(server.child.signalCode, null, server.log());
    await server.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
