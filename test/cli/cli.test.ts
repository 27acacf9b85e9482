// The `ferry` program as a user runs it: `serve` on an empty data dir (bootstrap key, SIGTERM) and
// `keys create` beside a running server, on both databases.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createSchema } from '../support/databases.js';
import { eachDatabase } from '../support/fixtures.js';
import { FERRY_BIN as CLI } from '../support/processes.js';

// Every `ferry` still running when the file ends is killed: a test that fails before its SIGTERM must
// not leave a server behind, whose open pipes would keep this file's process alive (on Node 24 the
// runner then waits for it with no time limit).
const running = new Set<ChildProcess>();
after(() => {
  for (const child of running) child.kill('SIGKILL');
});

function ferry(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
  return child;
}

async function output(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += d));
  child.stderr?.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, stdout, stderr };
}

/** Resolves with the first line matching `pattern`; `lines` collects every line. */
function waitForLine(child: ChildProcess, pattern: RegExp, lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`timed out waiting for ${pattern}: ${lines.join('\n')}`)),
      30_000,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      const found = lines.find((l) => pattern.test(l));
      if (found !== undefined) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.on('exit', (code) => reject(new Error(`exited with ${code}: ${lines.join('\n')}`)));
  });
}

await eachDatabase('ferry program', (database) => {
  let dataDir: string;
  let env: Record<string, string>;
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'ferry-cli-'));
    // Port 0: each serve binds one of the system's choice and names it in its listening line.
    env = { FERRY_DATA_DIR: dataDir, FERRY_PORT: '0' };
    if (database.name === 'postgres') {
      const schema = await createSchema();
      env.FERRY_DATABASE_URL = schema.url;
      drop = schema.drop;
    }
  });
  after(async () => {
    await drop?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('serve on an empty database writes the bootstrap key (0600), logs its path but not the key, and stops on SIGTERM', async () => {
    const server = ferry(['serve'], env);
    const lines: string[] = [];
    const listening = await waitForLine(server, /ferry is listening/, lines);
    const origin = String((JSON.parse(listening) as { url: string }).url);
    const file = join(dataDir, 'bootstrap-key');
    const key = readFileSync(file, 'utf8');
    assert.match(key, /^fry_[A-Za-z0-9_-]{43}\n$/);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    if (database.name === 'sqlite') assert.equal(statSync(join(dataDir, 'master.key')).mode & 0o777, 0o600);
    assert.ok(
      lines.some((l) => l.includes(file)),
      'the log names the file',
    );
    assert.ok(!lines.join('\n').includes(key.trim()), 'the log does not contain the key');
    const res = await fetch(`${origin}/v1/locations`, {
      headers: { authorization: `Bearer ${key.trim()}` },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), []);

    // keys create works while the server runs, and the new key is accepted by it.
    const created = await output(
      ferry(['keys', 'create', '--workspace', 'team-a', '--name', 'deploy', '--json'], env),
    );
    assert.equal(created.code, 0, created.stderr);
    const json = JSON.parse(created.stdout);
    assert.deepEqual(Object.keys(json).sort(), ['id', 'name', 'scopes', 'token', 'workspace']);
    assert.deepEqual(json.scopes, ['read', 'transfer', 'remove', 'share', 'admin'], 'all five by default');
    assert.equal(json.workspace, 'team-a');
    assert.equal(json.name, 'deploy');
    const asTeam = await fetch(`${origin}/v1/tokens`, {
      headers: { authorization: `Bearer ${json.token}` },
    });
    assert.equal(asTeam.status, 200);
    assert.deepEqual(
      ((await asTeam.json()) as Array<{ id: string }>).map((k) => k.id),
      [json.id],
    );

    const exited = new Promise<number | null>((resolve) => server.on('exit', resolve));
    server.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.ok(
      lines.some((l) => l.includes('"stopped"')),
      lines.join('\n'),
    );
  });

  test('a second start does not make another bootstrap key', async () => {
    const before = readFileSync(join(dataDir, 'bootstrap-key'), 'utf8');
    const server = ferry(['serve'], env);
    await waitForLine(server, /ferry is listening/, []);
    server.kill('SIGTERM');
    await new Promise((resolve) => server.on('exit', resolve));
    assert.equal(readFileSync(join(dataDir, 'bootstrap-key'), 'utf8'), before);
  });

  test('keys create --workspace prints a bare key, accepts --expires-at, and rejects bad arguments with exit code 2', async () => {
    const plain = await output(ferry(['keys', 'create', '--workspace', 'team-b'], env));
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^fry_[A-Za-z0-9_-]{43}\n$/);
    const expiring = await output(
      ferry(
        ['keys', 'create', '--workspace', 'team-b', '--expires-at', '2031-05-01T00:00:00Z', '--json'],
        env,
      ),
    );
    assert.equal(JSON.parse(expiring.stdout).expires_at, '2031-05-01T00:00:00.000Z');
    for (const args of [
      ['keys', 'create', '--workspace', 'x', '--expires-at', 'soon'],
      ['serve', 'now'],
      ['migrate', '--bogus'],
      ['keys', 'create', '--workspace', 'x', '--bogus'],
      ['frobnicate'],
    ]) {
      const bad = await output(ferry(args, env));
      assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
      assert.match(bad.stderr, /^ferry: /);
    }
  });

  test('migrate brings the schema up to date and exits 0', async () => {
    const res = await output(ferry(['migrate'], env));
    assert.equal(res.code, 0, res.stderr);
  });
});
