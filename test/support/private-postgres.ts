// A PostgreSQL server of the test's own, for the tests that stop and start the database under ferry
// (test/engine/database-restart.test.ts). The shared server on 127.0.0.1:5432 is used by every test file
// running beside this one: it is never stopped or restarted. This one is initdb'd into a temporary
// directory, listens only on a Unix socket in that directory (no TCP port: PostgreSQL cannot bind port 0
// and say which port it got, and a port chosen before the bind could be taken by another test's server
// in between), trusts local connections, and is stopped with SIGINT (PostgreSQL's fast shutdown: every
// session is ended, as in a restart under load) and started again on the same socket and data.
//
// Its clients (ferry, the test) reach it over TCP, as a deployment does, through a door of this process:
// a port of the system's choice whose every connection is relayed to the socket. The door stays open
// across a restart; while the server is away a connection through it is reset, as TCP's refusal ends
// one at once. (Straight to the socket a client would meet ENOENT, the socket file gone, which
// src/db/unavailable.ts does not count as the database being away.)
//
// PostgreSQL refuses to run as root: under root (CI containers) the server runs as the `postgres`
// account through runuser, in a directory that account owns. The binaries are Debian's
// (/usr/lib/postgresql/<version>/bin, the newest there), or those of FERRY_TEST_PG_BIN.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HANG_MS } from './wait.js';

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<the door's port>/postgres */
  readonly url: string;
  /** The directory of its Unix socket (`.s.PGSQL.5432`). */
  readonly socketDir: string;
  /** Fast shutdown (SIGINT to the postmaster); resolves once the server has exited. */
  stop(): Promise<void>;
  /** Starts the server again on the same socket and data; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the server if it runs and removes its directory. */
  destroy(): Promise<void>;
  /** The server's last log lines, for failure messages. */
  log(): string;
}

const asRoot = process.getuid?.() === 0;

/** Why this machine cannot run a private server, or undefined when it can. */
export function privatePostgresUnavailable(): string | undefined {
  if (binDir() === undefined) return 'no PostgreSQL server binaries (initdb, postgres) on this machine';
  if (asRoot && postgresAccount() === undefined) return 'running as root, and there is no postgres account';
  return undefined;
}

function binDir(): string | undefined {
  const given = process.env.FERRY_TEST_PG_BIN;
  if (given) return existsSync(join(given, 'postgres')) ? given : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** The command line that runs `program` as the account PostgreSQL accepts. */
function command(program: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args];
}

const READY = /database system is ready to accept connections/;
const STARTUP_MS = HANG_MS;

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  if (bin === undefined) throw new Error(privatePostgresUnavailable());
  const dir = mkdtempSync(join(tmpdir(), 'ferry-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    const account = postgresAccount();
    if (account === undefined) throw new Error(privatePostgresUnavailable());
    chownSync(dir, account.uid, account.gid);
  }
  const [initdb, initArgs] = command(join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '-A',
    'trust',
    '--no-sync',
    '--encoding=UTF8',
    '--locale=C',
  ]);
  execFileSync(initdb, initArgs, { stdio: 'pipe' });
  const lines: string[] = [];
  let server: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const start = async () => {
    const [program, args] = command(join(bin, 'postgres'), [
      '-D',
      data,
      // The port only names the socket (.s.PGSQL.5432), in a directory of this server's own.
      '-p',
      '5432',
      '-k',
      dir,
      // No address: no TCP at all (the value is empty; no shell here to take quotes away).
      '-c',
      'listen_addresses=',
      // A test server: nothing it holds has to survive the machine.
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    ]);
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    server = child;
    exited = new Promise((resolve) => child.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`PostgreSQL did not start within ${STARTUP_MS} ms\n${tail()}`));
      }, STARTUP_MS);
      const onLine = (chunk: Buffer) => {
        for (const line of chunk.toString('utf8').split('\n')) {
          if (line === '') continue;
          lines.push(line);
          if (READY.test(line)) {
            clearTimeout(timer);
            resolve();
          }
        }
      };
      child.stdout?.on('data', onLine);
      child.stderr?.on('data', onLine);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`PostgreSQL exited at start (code ${code}, signal ${signal})\n${tail()}`));
      });
    });
  };

  const tail = () => lines.slice(-30).join('\n');

  /** The postmaster's pid, from its lock file: under runuser the child is runuser, not the server. */
  const postmasterPid = (): number | undefined => {
    const file = join(data, 'postmaster.pid');
    if (!existsSync(file)) return undefined;
    const pid = Number(readFileSync(file, 'utf8').split('\n', 1)[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  };

  const stop = async () => {
    const child = server;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const pid = postmasterPid();
    if (pid !== undefined) process.kill(pid, 'SIGINT');
    else child.kill('SIGINT');
    await exited;
    server = undefined;
  };

  await start();
  const door = await openDoor(join(dir, '.s.PGSQL.5432'));
  return {
    url: `postgres://postgres@127.0.0.1:${door.port}/postgres`,
    socketDir: dir,
    stop,
    start,
    async destroy() {
      await door.close();
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    log: tail,
  };
}

/**
 * A TCP port of the system's choice on 127.0.0.1 relaying each connection to the Unix socket `socket`,
 * both ways; a connection the socket refuses (the server away) is reset.
 */
async function openDoor(socket: string): Promise<{ port: number; close(): Promise<void> }> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(socket);
    open.add(client);
    client.once('close', () => {
      open.delete(client);
      upstream.destroy();
    });
    // The server's end (a fast shutdown's last words included) ends the client's side through pipe().
    upstream.on('error', () => client.resetAndDestroy());
    client.on('error', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('the door has no port');
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of open) client.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The postgres account's ids, or undefined when there is none. */
function postgresAccount(): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8', stdio: 'pipe' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8', stdio: 'pipe' }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}
