// Processes a bench runs beside itself: s3rver (under --openssl-legacy-provider, docs/testing.md), the
// built ferry server (bin/ferry.js serve, as `npm start` runs it) on SQLite in a temporary data
// directory or on a database given in its environment, and worker-only ferry processes beside an API
// process on PostgreSQL (FERRY_ROLE=worker). Each handle's close() ends the process it started and
// removes what it created.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const root = new URL('../..', import.meta.url).pathname;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** dist/ built as `npm run build` builds it (scripts/build.mjs): bin/ferry.js runs dist/. */
export function buildDist(): void {
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error(`scripts/build.mjs failed (${r.status})`);
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export interface S3rverProcess {
  endpoint: string;
  pid: number;
  close(): Promise<void>;
}

/** s3rver in its own process (bench/support/s3rver-main.ts), so that it does not share our CPU. */
export async function startS3rverProcess(): Promise<S3rverProcess> {
  const child = spawn(
    process.execPath,
    ['--openssl-legacy-provider', '--import', 'tsx', join(root, 'bench/support/s3rver-main.ts')],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
  const endpoint = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code}) before listening`)));
    lines.once('line', (line) => resolve((JSON.parse(line) as { endpoint: string }).endpoint));
  });
  return { endpoint, pid: child.pid as number, close: () => stop(child) };
}

export interface FerryProcess {
  base: string;
  pid: number;
  /** The bootstrap key of the `default` workspace. */
  key: string;
  /** FERRY_DATA_DIR (ferry.db is there), removed by close(). */
  dataDir: string;
  /** POST with the bootstrap key and a JSON body. */
  post(path: string, body: unknown): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The built server on SQLite in a fresh data directory; `nodeArgs` go before bin/ferry.js. `checkout`
 * runs another checkout's build (bench/transfer/versus.ts: an earlier commit's), this one by default.
 */
export async function startFerry(
  options: { env?: Record<string, string>; nodeArgs?: string[]; checkout?: string } = {},
): Promise<FerryProcess> {
  const checkout = options.checkout ?? root;
  const dataDir = mkdtempSync(join(tmpdir(), 'ferry-bench-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    FERRY_DATA_DIR: dataDir,
    FERRY_PORT: String(port),
    FERRY_LOG_LEVEL: 'warn',
  };
  delete env.FERRY_DATABASE_URL; // SQLite unless the caller names a database
  Object.assign(env, options.env);
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), join(checkout, 'bin/ferry.js'), 'serve'],
    {
      cwd: checkout,
      env,
      stdio: 'inherit',
    },
  );
  const close = async () => {
    await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    let ready = false;
    for (let i = 0; i < 200 && !ready; i++) {
      if (child.exitCode !== null) throw new Error(`ferry exited (${child.exitCode}) before it was ready`);
      ready = await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (!ready) await new Promise((r) => setTimeout(r, 100));
    }
    if (!ready) throw new Error('ferry did not become ready in 20 s');
    const key = readFileSync(join(dataDir, 'bootstrap-key'), 'utf8').trim();
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    return { base, pid: child.pid as number, key, dataDir, post, close };
  } catch (err) {
    await close();
    throw err;
  }
}

export interface FerryWorker {
  pid: number;
  close(): Promise<void>;
}

/**
 * A worker-only ferry process (`FERRY_ROLE=worker`, bin/ferry.js serve) with `env` (the API process's
 * FERRY_DATABASE_URL, FERRY_MASTER_KEY and FERRY_DATA_DIR); resolves once it logs "worker started".
 * `nodeArgs` go before bin/ferry.js.
 */
export async function startFerryWorker(
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<FerryWorker> {
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'bin/ferry.js'), 'serve'], {
    cwd: root,
    env: {
      ...(process.env as Record<string, string>),
      ...env,
      FERRY_ROLE: 'worker',
      FERRY_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`ferry worker exited (${code}) before it started`)));
      lines.on('line', (line) => {
        if (line.includes('"worker started"')) resolve();
      });
    });
  } catch (err) {
    await stop(child);
    throw err;
  }
  lines.on('line', () => {}); // keep draining its log
  return { pid: child.pid as number, close: () => stop(child) };
}
