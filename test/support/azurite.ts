// azurite-blob started as a child process for tests (docs/testing.md): loopback, an ephemeral port,
// in-memory storage, loose mode, no telemetry. It prints the port it bound; we wait for that line and
// then for an answer on it.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HANG_MS, waitUntil } from './wait.js';

/** The emulator's well-known account and key (public, documented by Microsoft). */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_KEY =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface AzuriteHandle {
  /** http://127.0.0.1:PORT (the blob service root). */
  origin: string;
  /** http://127.0.0.1:PORT/devstoreaccount1 (the account's service URL, for metadata `endpoint`). */
  endpoint: string;
  port: number;
  /** The emulator's process, for benchmarks that read its CPU time. */
  pid: number;
  close(): Promise<void>;
}

const BIN = fileURLToPath(new URL('../../node_modules/.bin/azurite-blob', import.meta.url));
const STARTUP_MS = HANG_MS;

export async function startAzurite(): Promise<AzuriteHandle> {
  const child = spawn(
    BIN,
    [
      '--blobHost',
      '127.0.0.1',
      '--blobPort',
      '0',
      '--inMemoryPersistence',
      '--skipApiVersionCheck',
      '--loose',
      '--disableTelemetry',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let port: number;
  try {
    port = await waitForPort(child);
    await waitUntilAnswering(port);
  } catch (err) {
    await stop(child);
    throw err;
  }
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    endpoint: `${origin}/${AZURITE_ACCOUNT}`,
    port,
    pid: child.pid ?? 0,
    close: () => stop(child),
  };
}

function waitForPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => fail(new Error(`azurite did not start in ${STARTUP_MS} ms:\n${output}`)),
      STARTUP_MS,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listens on https?:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        cleanup();
        resolve(Number(match[1]));
      }
    };
    const onExit = (code: number | null) =>
      fail(new Error(`azurite exited (${code}) before listening:\n${output}`));
    const fail = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      // Keep draining so the child never blocks on a full pipe.
      child.stdout?.resume();
      child.stderr?.resume();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', onExit);
  });
}

async function waitUntilAnswering(port: number): Promise<void> {
  let last: unknown;
  await waitUntil(
    async () => {
      try {
        // Any HTTP answer (azurite says 400 or 403 to an anonymous request) means it serves.
        const res = await fetch(`http://127.0.0.1:${port}/${AZURITE_ACCOUNT}?comp=list`);
        await res.arrayBuffer();
        return true;
      } catch (err) {
        last = err;
        return false;
      }
    },
    {
      what: `azurite to answer on port ${port}`,
      timeoutMs: STARTUP_MS,
      pauseMs: 100,
      detail: () => String(last),
    },
  );
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
