// `ferry` as real child processes for the crash and restart tests: `node bin/ferry.js serve` (the built program)
// with the settings a test gives, its JSON log lines collected, and ways to wait for a line, to stop it
// (SIGTERM) or kill it (SIGKILL), and to wait for its exit. Every process started here is killed by
// killAll(), which tests call in after() so that a failed test never leaves a server behind.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { unique } from './fixtures.js';
import { HANG_MS } from './wait.js';

/** The built program (bin/ferry.js runs dist/), which scripts/test.mjs brings up to date before the tests. */
export const FERRY_BIN = new URL('../../bin/ferry.js', import.meta.url).pathname;
const STARTUP_MS = HANG_MS;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface FerryProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Every line it printed so far (stdout and stderr), in order. */
  readonly lines: string[];
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
  /** Resolves with the first line (seen so far or later) matching `pattern`; rejects on exit or timeout. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<Exit>;
  /** SIGKILL (kill -9), then wait for the exit. */
  kill(): Promise<Exit>;
  /** The log, for assertion messages. */
  log(): string;
}

const started = new Set<FerryProcess>();

/**
 * Processes that failed without a test asking (no stop() or kill()): a crash, a signal from elsewhere. A
 * request that then fails names them, with their exit and last lines, so the failure says why.
 */
const unexpected: string[] = [];

/** What unexpected exits there were, for an assertion message ('' when none). */
export function unexpectedExits(): string {
  return unexpected.join('\n');
}

/**
 * A port of 127.0.0.1 that nothing listens on, for a test of a refused connection: one at random below
 * the system's ephemeral range, to which a connection was just refused. No server of the suite's can
 * come to listen there before the test uses it: each binds port 0, and the system gives a port-0 bind
 * (as it gives an outgoing connection its source port) a port inside the ephemeral range only (Linux:
 * /proc/sys/net/ipv4/ip_local_port_range). Below it listens only a server that names its port, and one
 * that runs (the shared PostgreSQL's 5432) answers the check, so that port is never returned.
 */
export async function closedPort(): Promise<number> {
  const [low] = ephemeralRange();
  for (let tries = 0; tries < 50; tries++) {
    const port = 1024 + Math.floor(Math.random() * (low - 1024));
    if (await refused(port)) return port;
  }
  throw new Error(`no port below ${low} refused a connection in 50 tries`);
}

/** The ports the system hands out for port 0 and outgoing connections: Linux's setting, else IANA's. */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (low !== undefined && high !== undefined && low > 1024 && high >= low) return [low, high];
  } catch {
    // Not Linux: IANA's dynamic ports, which macOS and the BSDs use.
  }
  return [49152, 65535];
}

/** Whether a connection to 127.0.0.1:`port` is refused (nothing listens there). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/**
 * Starts `ferry <args>` with the test's settings on top of this process's environment; `nodeArgs` are
 * options for node itself (those NODE_OPTIONS refuses, such as V8's --min-semi-space-size).
 */
export function startFerry(
  name: string,
  args: string[],
  env: Record<string, string>,
  nodeArgs: string[] = [],
): FerryProcess {
  const child = spawn(process.execPath, ['--openssl-legacy-provider', ...nodeArgs, FERRY_BIN, ...args], {
    env: { ...process.env, FERRY_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`${name} did not start`);
  const lines: string[] = [];
  const watchers = new Set<() => void>();
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let rest = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      lines.push(...parts.filter((l) => l !== ''));
      for (const notify of watchers) notify();
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  let asked = false;
  const log = () => `--- ${name} (pid ${child.pid}) ---\n${lines.slice(-60).join('\n')}`;
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      if (!asked && (code !== 0 || signal !== null)) {
        const what = `${name} (pid ${child.pid}) exited unexpectedly: code ${code}, signal ${signal}`;
        unexpected.push(`${what}\n${lines.slice(-20).join('\n')}`);
        console.error(`${what}\n${log()}`);
      }
      for (const notify of watchers) notify();
      resolve({ code, signal });
    });
  });
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const handle: FerryProcess = {
    name,
    pid: child.pid,
    child,
    lines,
    exited,
    log,
    waitForLine(pattern, timeoutMs = STARTUP_MS) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find((l) => pattern.test(l));
          if (found !== undefined) {
            done();
            resolve(found);
          } else if (gone()) {
            done();
            reject(new Error(`${name} exited before printing ${pattern}\n${log()}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${name} did not print ${pattern} within ${timeoutMs} ms\n${log()}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          watchers.delete(check);
        };
        watchers.add(check);
        check();
      });
    },
    async stop() {
      asked = true;
      if (!gone()) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      asked = true;
      if (!gone()) child.kill('SIGKILL');
      return exited;
    },
  };
  started.add(handle);
  void exited.then(() => started.delete(handle));
  return handle;
}

export interface ServeProcess extends FerryProcess {
  /** Where it listens, `http://127.0.0.1:PORT`, from its "ferry is listening" line ('' for a worker). */
  readonly origin: string;
}

/**
 * `ferry serve`, resolved once it is ready: listening (api, all) or its worker started (worker). It
 * listens on a port of the system's choice (FERRY_PORT=0) unless `env` names one, and `origin` says
 * which: no port is chosen before it is bound, so no other server can take it in between.
 */
export async function startServe(
  name: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<ServeProcess> {
  const server = startFerry(name, ['serve'], { FERRY_PORT: '0', ...env }, nodeArgs);
  let origin = '';
  try {
    if (env.FERRY_ROLE === 'worker') await server.waitForLine(/"worker started"/);
    else origin = await listeningOrigin(server);
  } catch (err) {
    await server.kill();
    throw err;
  }
  return Object.assign(server, { origin });
}

/**
 * Waits for a `ferry serve`'s "ferry is listening" line and answers the origin it names
 * (`http://127.0.0.1:PORT`): the port it bound, which is the system's choice under FERRY_PORT=0.
 */
export async function listeningOrigin(server: FerryProcess, timeoutMs?: number): Promise<string> {
  const line = await server.waitForLine(/"ferry is listening"/, timeoutMs);
  return String((JSON.parse(line) as { url: string }).url);
}

/** Kills (SIGKILL) every process started here that is still running, and waits for them. */
export async function killAll(): Promise<void> {
  await Promise.all([...started].map((p) => p.kill()));
}

/** One authenticated JSON call to a ferry process, with the parsed answer (empty object when none). */
export async function apiCall<T = Record<string, unknown>>(
  origin: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: T }> {
  let res: Response;
  try {
    res = await fetch(`${origin}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const exits = unexpectedExits();
    throw new Error(
      `${method} ${path} got no answer (${cause?.code ?? cause?.message ?? String(err)})${exits ? `; ${exits}` : ''}`,
      { cause: err },
    );
  }
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : {}) as T };
}

/** An s3 location on `endpoint` with access key `key`; its id. */
export async function s3Location(
  origin: string,
  token: string,
  endpoint: string,
  key: string,
): Promise<string> {
  const res = await apiCall(origin, token, 'POST', '/v1/locations', {
    provider: 's3',
    label: unique('s3'),
    secret: { access_key_id: key, secret_access_key: `secret-${key}` },
    metadata: { endpoint },
  });
  assert.equal(res.status, 201, JSON.stringify(res.json));
  return String(res.json.id);
}
