// Plans, a preview that binds (docs/api.md, "Plans"): every write of the plans and plan_entries
// tables. A dry run inserts its plan (counts null), then its entries in batches as the source is
// listed, then the counts; a plan is run once, in the transaction that queues its job (ran); the job's
// planner reads the entries back in order (entries), and retention prunes expired plans (prune).
// The store is generic over what a plan holds: a kind, the request resolved to location ids, and a
// stream of entries, each a key with its size, ETag, action and (for a transfer's objects) its work.
//
// Entries are kept in the order people read a plan in (docs/api.md, "Plans"): what changes (copy,
// delete, move, remove) first, then what is skipped, each in listing order. A dry run streams its
// listing and cannot know how many changes are to come, so the order is in the numbers it writes
// (EntryNumbers): changes from 0 and skips from SKIPPED_FROM, past any plan's entries. Reading, paging
// and a run's planner then follow `seq` alone, and a page's cursor stays one number.

import { type RawBuilder, sql } from 'kysely';
import type { PlanRow } from '../db/schema.js';
import { workspaceRow } from '../db/workspace-row.js';
import { type PlanGiven, type PlanRequest, planCounts, planGiven, planRequest } from '../durable/work.js';
import { type Queryable, rowsChanged } from '../queue/moves.js';
import { JOB_ACTIVE } from '../states.js';
import { locationIds, specLocations } from './specs.js';

/** What a plan runs. */
export const PLAN_KINDS = ['copy', 'sync', 'move', 'remove'] as const;
export type PlanKind = (typeof PLAN_KINDS)[number];

/** How long a plan can be run after its dry run (docs/api.md, "Plans"). */
export const PLAN_TTL_MS = 60 * 60_000;

// The request a plan runs, resolved to location ids when the dry run accepted it (src/durable/work.ts).
export type { PlanRequest };

/** One object of a plan, as a dry run's lister yields it. */
export interface PlanEntry {
  key: string;
  size: number | null;
  etag: string | null;
  /** What the run does with it (copy, move, remove; sync: copy, skip, delete). */
  action: string;
  /** JSON of the object's own work (src/lifecycle/specs.ts, ObjectWork); absent for a copy's object. */
  work?: string;
}

/** Where a plan's skipped entries are numbered from: past every change a plan can hold. */
export const SKIPPED_FROM = 1_000_000_000;

/** The entries' numbers as a dry run writes them: changes first, then skips, each in listing order. */
export class EntryNumbers {
  #changes = 0;
  #skips = 0;

  /** The number of the next entry with this action. */
  next(action: string): number {
    if (action === 'skip') return SKIPPED_FROM + this.#skips++;
    if (this.#changes >= SKIPPED_FROM) throw new Error('a plan holds fewer changes than SKIPPED_FROM');
    return this.#changes++;
  }

  /** Entries numbered so far. */
  get count(): number {
    return this.#changes + this.#skips;
  }
}

export interface NewPlan {
  id: string;
  workspaceId: string;
  request: PlanRequest;
  /** The request's from and to as given, for the transfer its run queues. */
  given: PlanGiven;
}

/** The locations a plan's run touches. */
function planLocations(request: PlanRequest): string[] {
  if ('spec' in request) return specLocations(request.spec);
  return [request.source.location_id, request.destination.location_id];
}

export async function create(q: Queryable, plan: NewPlan, now: number, ttlMs = PLAN_TTL_MS): Promise<number> {
  const expiresAt = now + ttlMs;
  await q
    .insertInto('plans')
    .values({
      id: plan.id,
      workspace_id: plan.workspaceId,
      kind: plan.request.kind,
      location_ids: locationIds(planLocations(plan.request)),
      request: planRequest.encode(plan.request),
      given: planGiven.encode(plan.given),
      counts: null,
      created_at: now,
      expires_at: expiresAt,
      ran_at: null,
      job_id: null,
      transfer_id: null,
    })
    .execute();
  return expiresAt;
}

/** Writes one batch of entries, each with the number EntryNumbers gave it. */
export async function addEntries(q: Queryable, planId: string, batch: StoredEntry[]): Promise<void> {
  if (batch.length === 0) return;
  await q
    .insertInto('plan_entries')
    .values(
      batch.map((e) => ({
        plan_id: planId,
        seq: e.seq,
        key: e.key,
        size: e.size,
        etag: e.etag,
        action: e.action,
        work: e.work ?? null,
      })),
    )
    .execute();
}

/** Every entry is written: the plan can be read and run. */
export async function complete(
  q: Queryable,
  planId: string,
  counts: Record<string, number>,
  total: number,
): Promise<void> {
  await q
    .updateTable('plans')
    .set({ counts: planCounts.encode(counts), total })
    .where('id', '=', planId)
    .execute();
}

/** A dry run that failed (too many entries, too long, a listing error) leaves nothing behind. */
export async function discard(q: Queryable, planId: string): Promise<void> {
  await q.deleteFrom('plan_entries').where('plan_id', '=', planId).execute();
  await q.deleteFrom('plans').where('id', '=', planId).execute();
}

/** A complete plan of the workspace; undefined when there is none (or it is still being written). */
export async function find(
  q: Queryable,
  workspaceId: string,
  planId: string,
  /** A further condition: the locations of the key asking (src/domain/caller.ts). */
  within: RawBuilder<boolean> = sql<boolean>`1 = 1`,
): Promise<PlanRow | undefined> {
  return workspaceRow(q, 'plans', workspaceId, planId, sql<boolean>`counts is not null and ${within}`);
}

export interface StoredEntry extends PlanEntry {
  /** Its place in the plan: changes first, then skips (EntryNumbers). */
  seq: number;
}

/** Up to `limit` entries after `afterSeq`, in order: changes first, then skips. */
export async function entries(
  q: Queryable,
  planId: string,
  afterSeq: number,
  limit: number,
): Promise<StoredEntry[]> {
  const rows = await q
    .selectFrom('plan_entries')
    .select(['seq', 'key', 'size', 'etag', 'action', 'work'])
    .where('plan_id', '=', planId)
    .where('seq', '>', afterSeq)
    .orderBy('seq', 'asc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    seq: r.seq,
    key: r.key,
    size: r.size === null ? null : Number(r.size),
    etag: r.etag,
    action: r.action,
    ...(r.work === null ? {} : { work: r.work }),
  }));
}

/**
 * ran: the plan is taken for its run, in the transaction that queues the run; false when it was run
 * already (or meanwhile, by another request).
 */
export async function ran(
  q: Queryable,
  planId: string,
  run: { jobId: string; transferId: string | null },
  now: number,
): Promise<boolean> {
  const updated = await q
    .updateTable('plans')
    .set({ ran_at: now, job_id: run.jobId, transfer_id: run.transferId })
    .where('id', '=', planId)
    .where('ran_at', 'is', null)
    .executeTakeFirst();
  return rowsChanged(updated) > 0;
}

/**
 * prune: up to `limit` plans expired before `now` leave the table with their entries (at most `limit`
 * entries a call, so run it again until it answers 0). A plan whose run is still being planned stays:
 * its planner reads the entries.
 */
export async function prune(q: Queryable, now: number, limit: number): Promise<number> {
  const picked = await sql<{ id: string }>`
    select p.id from plans p
    where p.expires_at < ${now}
      and not exists (select 1 from jobs j where j.plan_id = p.id and j.planning_done = 0
                      and j.status in (${sql.join(JOB_ACTIVE)}))
    order by p.expires_at
    limit ${limit}`.execute(q);
  const ids = picked.rows.map((r) => r.id);
  if (ids.length === 0) return 0;
  const gone = rowsChanged(
    await q
      .deleteFrom('plan_entries')
      .where(({ eb, refTuple, selectFrom }) =>
        eb(
          refTuple('plan_id', 'seq'),
          'in',
          selectFrom('plan_entries')
            .select(['plan_id', 'seq'])
            .where('plan_id', 'in', ids)
            .limit(limit)
            .$asTuple('plan_id', 'seq'),
        ),
      )
      .executeTakeFirst(),
  );
  if (gone >= limit) return gone;
  return gone + rowsChanged(await q.deleteFrom('plans').where('id', 'in', ids).executeTakeFirst());
}
