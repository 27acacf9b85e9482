// What the restart tests (test/engine/restart.test.ts, test/engine/restart-manifest.ts) read of a bulk
// job: its view through the API, read again until it reaches a state, and its object rows and planning
// flag straight from the server's SQLite file (read beside a running server: WAL allows it).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { waitUntil } from '../support/wait.js';

export interface JobView {
  status: string;
  counts: { total: number; pending: number; succeeded: number; skipped: number; failed: number };
  bytes_done: number;
}

export interface ObjectRow {
  seq: number;
  key: string;
  status: string;
  attempts: number;
  last_attempt_at: number | null;
  lease_owner: string | null;
}

/** One authenticated call to the server that runs now (test/support/processes.ts, apiCall). */
export type Call = <T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; json: T }>;

/**
 * Reads the job until `until` holds; fails with the last view and `log()` (the server's) after `ms`.
 * Each read is a request the server under test must answer on a shared machine: one each `pauseMs`.
 */
export async function watchJob(
  call: Call,
  id: string,
  until: (job: JobView) => boolean,
  ms: number,
  log: () => string,
  pauseMs = 100,
): Promise<JobView> {
  let last: JobView | undefined;
  return waitUntil(
    async () => {
      const res = await call<JobView>('GET', `/v1/jobs/${id}`);
      assert.equal(res.status, 200, JSON.stringify(res.json));
      last = res.json;
      return until(last) ? last : undefined;
    },
    {
      what: 'the job to reach the expected state',
      timeoutMs: ms,
      pauseMs,
      detail: () => `${JSON.stringify(last)}\n${log()}`,
    },
  );
}

function readDatabase<T>(dataDir: string, read: (db: SQLite.Database) => T): T {
  const db = new SQLite(join(dataDir, 'ferry.db'));
  try {
    db.pragma('busy_timeout = 5000');
    return read(db);
  } finally {
    db.close();
  }
}

/** The job's objects as the database has them, in their order. */
export function jobObjects(dataDir: string, jobId: string): ObjectRow[] {
  return readDatabase(
    dataDir,
    (db) =>
      db
        .prepare(
          'select seq, key, status, attempts, last_attempt_at, lease_owner from job_objects where job_id = ? order by seq',
        )
        .all(jobId) as ObjectRow[],
  );
}

/** The job's planning_done flag (1 once every object is planned), or -1 when there is no such job. */
export function planningDone(dataDir: string, jobId: string): number {
  return readDatabase(dataDir, (db) => {
    const row = db.prepare('select planning_done from jobs where id = ?').get(jobId) as
      | { planning_done: number }
      | undefined;
    return row?.planning_done ?? -1;
  });
}
