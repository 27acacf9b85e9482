// Fair share between workspaces: one workspace's 100,000-object job must not starve another's single
// copy. A worker with free slots hands them out one at a time to the workspace running the least work
// (counted across every process, from the database), never past the per-workspace ceiling
// (FERRY_WORKSPACE_CONCURRENCY); within a workspace, single transfers come first, then its jobs, the
// least busy first. Each workspace's claim counts what it runs and claims in one transaction, under a
// per-workspace advisory lock on PostgreSQL (SQLite has one writer), so two processes cannot both
// fill the same workspace's last slots. docs/engine.md, "Fair share".
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { JobObjectRow, TransferRow } from '../db/schema.js';
import * as jobs from '../lifecycle/jobs.js';
import { runningByJob } from '../lifecycle/object-reads.js';
import * as objects from '../lifecycle/objects.js';
import * as transfers from '../lifecycle/transfers.js';
import type { Lease, Queryable } from '../queue/moves.js';

export interface Claimed {
  objects: JobObjectRow[];
  transfers: TransferRow[];
}

export interface WorkspaceDemand {
  workspaceId: string;
  /** Objects and transfers running now, in every process. */
  running: number;
}

/**
 * Hands `slots` out one at a time to the workspace with the least running plus handed out so far
 * (ties: the order given), none past `ceiling`. Pure, for the tests.
 */
export function allot(demands: WorkspaceDemand[], slots: number, ceiling: number): Map<string, number> {
  const given = new Map<string, number>(demands.map((d) => [d.workspaceId, 0]));
  for (let i = 0; i < slots; i++) {
    let best: WorkspaceDemand | undefined;
    let bestLoad = Number.POSITIVE_INFINITY;
    for (const d of demands) {
      const load = d.running + (given.get(d.workspaceId) ?? 0);
      if (load < ceiling && load < bestLoad) {
        best = d;
        bestLoad = load;
      }
    }
    if (!best) break;
    given.set(best.workspaceId, (given.get(best.workspaceId) ?? 0) + 1);
  }
  for (const [id, n] of given) if (n === 0) given.delete(id);
  return given;
}

export class FairShare {
  constructor(
    private readonly db: Db,
    /** Most objects and transfers one workspace runs at once, across every process. */
    private readonly ceiling: number,
  ) {}

  /** Claims up to `slots` objects and transfers, shared fairly between the workspaces with work. */
  async claim(lease: Lease, slots: number): Promise<Claimed> {
    const claimed: Claimed = { objects: [], transfers: [] };
    if (slots <= 0) return claimed;
    const q = this.db.kysely;
    const [active, due, runningTransfers] = await Promise.all([
      jobs.active(q),
      transfers.dueByWorkspace(q, lease.now),
      transfers.runningByWorkspace(q),
    ]);
    const jobsOf = new Map<string, string[]>();
    for (const job of active) jobsOf.set(job.workspace_id, [...(jobsOf.get(job.workspace_id) ?? []), job.id]);
    const workspaces = [...new Set([...due.keys(), ...jobsOf.keys()])];
    if (workspaces.length === 0) return claimed;
    const runningObjects = await runningByJob(
      q,
      active.map((j) => j.id),
    );
    const running = new Map<string, number>();
    for (const job of active) {
      running.set(job.workspace_id, (running.get(job.workspace_id) ?? 0) + (runningObjects.get(job.id) ?? 0));
    }
    // A workspace that had less work than it was given leaves the rest to the others: a few rounds.
    const exhausted = new Set<string>();
    let left = slots;
    for (let round = 0; round < 3 && left > 0; round++) {
      const demands = workspaces
        .filter((id) => !exhausted.has(id))
        .map((id) => ({
          workspaceId: id,
          running: (running.get(id) ?? 0) + (runningTransfers.get(id) ?? 0),
        }));
      const allotted = allot(demands, left, this.ceiling);
      if (allotted.size === 0) break;
      for (const [workspaceId, n] of allotted) {
        const got = await this.claimIn(lease, workspaceId, n, jobsOf.get(workspaceId) ?? [], runningObjects);
        claimed.transfers.push(...got.transfers);
        claimed.objects.push(...got.objects);
        const count = got.transfers.length + got.objects.length;
        running.set(workspaceId, (running.get(workspaceId) ?? 0) + count);
        left -= count;
        if (count < n) exhausted.add(workspaceId);
      }
    }
    return claimed;
  }

  /** One workspace's share: its due transfers first, then objects of its jobs, least busy job first. */
  private claimIn(
    lease: Lease,
    workspaceId: string,
    want: number,
    jobIds: string[],
    runningByJob: Map<string, number>,
  ): Promise<Claimed> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const n = Math.min(want, this.ceiling - (await this.runningIn(trx, workspaceId, jobIds)));
      const got: Claimed = { objects: [], transfers: [] };
      if (n <= 0) return got;
      got.transfers = await transfers.claim(trx, this.db.dialect, lease, workspaceId, n);
      let left = n - got.transfers.length;
      const order = [...jobIds].sort((a, b) => (runningByJob.get(a) ?? 0) - (runningByJob.get(b) ?? 0));
      for (let i = 0; i < order.length && left > 0; i++) {
        // An even part of what is left for each remaining job; what one cannot use goes to the next.
        const share = Math.ceil(left / (order.length - i));
        const rows = await objects.claim(trx, this.db.dialect, lease, order[i] as string, share);
        got.objects.push(...rows);
        left -= rows.length;
      }
      return got;
    });
  }

  /** Counted inside the claim's transaction, after the workspace's lock: the ceiling holds across processes. */
  private async runningIn(trx: Queryable, workspaceId: string, jobIds: string[]): Promise<number> {
    if (this.db.dialect === 'postgres') {
      await sql`select pg_advisory_xact_lock(hashtext(${`ferry.claim.${workspaceId}`}))`.execute(trx);
    }
    const [objectsRunning, transfersRunning] = await Promise.all([
      runningByJob(trx, jobIds),
      trx
        .selectFrom('transfers')
        .select(sql<number>`count(*)`.as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('status', '=', 'running')
        .executeTakeFirstOrThrow(),
    ]);
    let total = Number(transfersRunning.n);
    for (const n of objectsRunning.values()) total += n;
    return total;
  }
}
