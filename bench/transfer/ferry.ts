// ferry's side of bench/transfer, through its HTTP API as a client would use it: locations, a prefix
// copy (a job) or a single copy (a transfer) polled until it ends, and the latency of a manifest job.
// Time is the client's wall time from the POST to the poll that sees the end (every 50 ms); memory is
// the server process's peak RSS during the run (VmHWM, reset before it); CPU is the server's.

import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { AZURITE_ACCOUNT, AZURITE_KEY } from '../../test/support/azurite.js';
import { cpuOf, memoryOf, resetPeak } from '../support/proc.js';
import type { FerryProcess } from '../support/processes.js';
import type { ToolRun } from './peers.js';

const POLL_MS = 50;

export interface Locations {
  /** Two s3 locations with one key and endpoint: ferry copies between them server-side. */
  s3a: string;
  s3b: string;
  /** The same s3rver under another access key: another account, so a copy from s3a is streamed. */
  s3other: string;
  az: string;
}

interface JobView {
  job_id: string;
  status: string;
  counts: { total: number; pending: number; succeeded: number; skipped: number; failed: number } & {
    /** A verify job's findings (docs/api.md, "Verify"). */
    equal?: number;
  };
  bytes_done: number;
  created_at: string;
  finished_at?: string;
  error?: string;
}

interface TransferView {
  id: string;
  status: string;
  bytes_done: number;
  error?: string;
  counts?: JobView['counts'];
}

async function get<T>(ferry: FerryProcess, path: string): Promise<T> {
  const res = await fetch(`${ferry.base}${path}`, { headers: { authorization: `Bearer ${ferry.key}` } });
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function post<T>(ferry: FerryProcess, path: string, body: unknown, status: number): Promise<T> {
  const res = await ferry.post(path, body);
  const text = await res.text();
  if (res.status !== status) throw new Error(`POST ${path}: ${res.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

export async function createLocations(ferry: FerryProcess, s3: string, azure: string): Promise<Locations> {
  const secret = { access_key_id: 'bench', secret_access_key: 'bench' };
  const create = async (body: Record<string, unknown>) =>
    (await post<{ id: string }>(ferry, '/v1/locations', body, 201)).id;
  return {
    s3a: await create({ provider: 's3', label: 'bench-s3-a', secret, metadata: { endpoint: s3 } }),
    s3b: await create({ provider: 's3', label: 'bench-s3-b', secret, metadata: { endpoint: s3 } }),
    s3other: await create({
      provider: 's3',
      label: 'bench-s3-other',
      secret: { access_key_id: 'bench-other', secret_access_key: 'bench-other' },
      metadata: { endpoint: s3 },
    }),
    az: await create({
      provider: 'azureblob',
      label: 'bench-azurite',
      secret: { access_key_id: AZURITE_ACCOUNT, secret_access_key: AZURITE_KEY },
      metadata: { endpoint: azure },
    }),
  };
}

/** Where the server's memory is after a run, from its /metrics (V8 heap, memory outside it). */
async function printHeap(ferry: FerryProcess, rssBytes: number): Promise<void> {
  const text = await (await fetch(`${ferry.base}/metrics`)).text();
  const metric = (name: string) =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]);
  const mib = (b: number) => `${(b / 1048576).toFixed(1)} MiB`;
  console.log(
    `  ferry after the run: RSS ${mib(rssBytes)}, V8 heap ${mib(metric('ferry_nodejs_heap_size_total_bytes'))} (used ${mib(metric('ferry_nodejs_heap_size_used_bytes'))}), external ${mib(metric('ferry_nodejs_external_memory_bytes'))}, transfer memory peak ${mib(metric('ferry_transfer_memory_peak_bytes'))}`,
  );
}

const finished = new Set(['complete', 'partial', 'failed', 'canceled']);

/**
 * Runs `start` (which POSTs and answers the paths to poll), measured as described above until every
 * path's view is done.
 */
async function measured(
  ferry: FerryProcess,
  start: () => Promise<string[]>,
  isDone: (view: JobView & TransferView) => boolean,
): Promise<ToolRun & { views: Array<JobView & TransferView> }> {
  await resetPeak(ferry.pid);
  const before = await memoryOf(ferry.pid);
  const cpu0 = await cpuOf(ferry.pid);
  const started = performance.now();
  const paths = await start();
  let views: Array<JobView & TransferView>;
  for (;;) {
    views = await Promise.all(paths.map((path) => get<JobView & TransferView>(ferry, path)));
    if (views.every(isDone)) break;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const seconds = (performance.now() - started) / 1000;
  const [memory, cpu1] = await Promise.all([memoryOf(ferry.pid), cpuOf(ferry.pid)]);
  await printHeap(ferry, memory.rssBytes);
  return {
    seconds,
    peakBytes: memory.peakBytes,
    cpuSeconds: cpu1 - cpu0,
    rssBeforeBytes: before.rssBytes,
    views,
  };
}

/** A prefix copy job ("<location>:<bucket>/<prefix>/" both sides); throws unless it ends complete. */
export async function prefixCopy(
  ferry: FerryProcess,
  from: string,
  to: string,
  expectedObjects: number,
): Promise<ToolRun> {
  const result = await measured(
    ferry,
    async () => [`/v1/jobs/${(await post<{ job_id: string }>(ferry, '/v1/copy', { from, to }, 202)).job_id}`],
    (view) => finished.has(view.status),
  );
  const [view] = result.views;
  if (view?.status !== 'complete' || view.counts.succeeded !== expectedObjects)
    throw new Error(`ferry job ${from} → ${to} ended ${JSON.stringify(view)}`);
  return result;
}

/**
 * A verify job of two prefixes (`POST /v1/verify`, docs/api.md "Verify") in `mode`; throws unless it
 * ends complete with every one of `expectedObjects` found `equal`.
 */
export async function prefixVerify(
  ferry: FerryProcess,
  from: string,
  to: string,
  mode: 'checksum' | 'download' | 'size',
  expectedObjects: number,
): Promise<ToolRun> {
  const result = await measured(
    ferry,
    async () => [
      `/v1/jobs/${(await post<{ job_id: string }>(ferry, '/v1/verify', { from, to, mode }, 202)).job_id}`,
    ],
    (view) => finished.has(view.status),
  );
  const [view] = result.views;
  if (view?.status !== 'complete' || view.counts.equal !== expectedObjects)
    throw new Error(`ferry verify (${mode}) ${from} ↔ ${to} ended ${JSON.stringify(view)}`);
  return result;
}

/**
 * A prefix move (a transfer over several objects: "<label>/<bucket>/<prefix>/**" to "<label>/<bucket>/"),
 * run object by object by the job engine; throws unless it ends complete with every object moved.
 */
export async function prefixMove(
  ferry: FerryProcess,
  from: string,
  to: string,
  expectedObjects: number,
): Promise<ToolRun> {
  const result = await measured(
    ferry,
    async () => [`/v1/transfers/${(await post<{ id: string }>(ferry, '/move', { from, to }, 202)).id}`],
    (view) => finished.has(view.status),
  );
  const [view] = result.views;
  if (view?.status !== 'complete' || view.counts?.succeeded !== expectedObjects)
    throw new Error(`ferry move ${from} → ${to} ended ${JSON.stringify(view)}`);
  return result;
}

/** A single copy (a transfer); throws unless it ends complete. */
export async function singleCopy(ferry: FerryProcess, from: string, to: string): Promise<ToolRun> {
  const result = await measured(
    ferry,
    async () => [`/v1/transfers/${(await post<{ id: string }>(ferry, '/v1/copy', { from, to }, 202)).id}`],
    (view) => finished.has(view.status),
  );
  if (result.views[0]?.status !== 'complete')
    throw new Error(`ferry transfer ${from} → ${to} ended ${JSON.stringify(result.views[0])}`);
  return result;
}

/**
 * A prefix copy job and a single copy started together, measured as one run until both end (the
 * peak memory of the server while both run); throws unless both end complete.
 */
export async function jobAndSingleCopy(
  ferry: FerryProcess,
  job: { from: string; to: string; objects: number },
  single: { from: string; to: string },
): Promise<ToolRun> {
  const result = await measured(
    ferry,
    async () => {
      const [started, transfer] = await Promise.all([
        post<{ job_id: string }>(ferry, '/v1/copy', { from: job.from, to: job.to }, 202),
        post<{ id: string }>(ferry, '/v1/copy', single, 202),
      ]);
      return [`/v1/jobs/${started.job_id}`, `/v1/transfers/${transfer.id}`];
    },
    (view) => finished.has(view.status),
  );
  const [jobView, transferView] = result.views;
  if (jobView?.status !== 'complete' || jobView.counts.succeeded !== job.objects)
    throw new Error(`ferry job ${job.from} → ${job.to} ended ${JSON.stringify(jobView)}`);
  if (transferView?.status !== 'complete')
    throw new Error(`ferry transfer ${single.from} → ${single.to} ended ${JSON.stringify(transferView)}`);
  return result;
}

export interface ManifestLatency {
  keys: number;
  /** Client: the POST until its 202. */
  acceptMs: number;
  /** Server clock: the job's created_at until the first object's first attempt (job_objects). */
  firstAttemptMs: number;
  /** Client: the 202 until a poll (every 100 ms) shows one object finished. */
  firstDoneMs: number;
  /** Client: the 202 until the job's counts show every manifest key planned. */
  plannedMs: number | undefined;
}

/**
 * (d): accepts a manifest job of `keys` and measures how soon its first object runs. The first
 * object's start is read from ferry's own database (SQLite in the data directory, opened read-only):
 * min(job_objects.last_attempt_at), stamped when a worker claims the object, against jobs.created_at,
 * stamped at the accept; both by the server's clock. The job is canceled once planning is done (the
 * missing keys would each fail; what they cost is not the measure).
 */
export async function manifestLatency(
  ferry: FerryProcess,
  from: string,
  to: string,
  keys: string[],
): Promise<ManifestLatency> {
  const t0 = performance.now();
  const { job_id } = await post<{ job_id: string }>(ferry, '/v1/copy', { from, to, manifest: keys }, 202);
  const accepted = performance.now();
  let firstDone: number | undefined;
  let planned: number | undefined;
  const deadline = accepted + 60_000;
  while ((firstDone === undefined || planned === undefined) && performance.now() < deadline) {
    const view = await get<JobView>(ferry, `/v1/jobs/${job_id}`);
    const now = performance.now();
    if (firstDone === undefined && view.counts.succeeded + view.counts.failed + view.counts.skipped > 0)
      firstDone = now;
    if (planned === undefined && view.counts.total === keys.length) planned = now;
    if (finished.has(view.status)) break;
    // Not more often: each GET of a job counts its objects, which costs the server more than a
    // millisecond at 100,000 objects, and would slow down what is measured.
    await new Promise((r) => setTimeout(r, 100));
  }
  await ferry.post(`/v1/jobs/${job_id}/cancel`, {});
  const db = new SQLite(join(ferry.dataDir, 'ferry.db'), { readonly: true, fileMustExist: true });
  try {
    const job = db.prepare('select created_at from jobs where id = ?').get(job_id) as { created_at: number };
    const first = db
      .prepare('select min(last_attempt_at) as t from job_objects where job_id = ?')
      .get(job_id) as { t: number | null };
    if (first.t === null) throw new Error(`job ${job_id}: no object was attempted`);
    if (firstDone === undefined) throw new Error(`job ${job_id}: no object finished within 60 s`);
    return {
      keys: keys.length,
      acceptMs: accepted - t0,
      firstAttemptMs: first.t - Number(job.created_at),
      firstDoneMs: firstDone - accepted,
      plannedMs: planned === undefined ? undefined : planned - accepted,
    };
  } finally {
    db.close();
  }
}

/** A sync's job view: the counts of a bulk job plus what it deleted (docs/api.md, "Sync"). */
export type SyncView = JobView & { counts: JobView['counts'] & { deleted?: number } };

/**
 * `POST /v1/sync` ("<location>:<bucket>/<prefix>/" both sides, `body` adds compare, delete…) polled
 * until it ends; throws unless it ends complete. Answers the run and the job's view.
 */
export async function prefixSync(
  ferry: FerryProcess,
  from: string,
  to: string,
  body: Record<string, unknown> = {},
): Promise<ToolRun & { view: SyncView }> {
  const result = await measured(
    ferry,
    async () => [
      `/v1/jobs/${(await post<{ job_id: string }>(ferry, '/v1/sync', { from, to, ...body }, 202)).job_id}`,
    ],
    (view) => finished.has(view.status),
  );
  const view = result.views[0] as SyncView | undefined;
  if (view?.status !== 'complete')
    throw new Error(`ferry sync ${from} → ${to} ended ${JSON.stringify(view)}`);
  return { ...result, view };
}

/** A manifest copy job of `keys` (relative to both prefixes); throws unless every key is copied. */
export async function manifestCopy(
  ferry: FerryProcess,
  from: string,
  to: string,
  keys: string[],
): Promise<ToolRun> {
  const result = await measured(
    ferry,
    async () => [
      `/v1/jobs/${(await post<{ job_id: string }>(ferry, '/v1/copy', { from, to, manifest: keys }, 202)).job_id}`,
    ],
    (view) => finished.has(view.status),
  );
  const [view] = result.views;
  if (view?.status !== 'complete' || view.counts.succeeded !== keys.length)
    throw new Error(`ferry manifest job ${from} → ${to} ended ${JSON.stringify(view)}`);
  return result;
}
