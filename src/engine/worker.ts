// The worker: claims job objects and transfers (shared fairly between workspaces, src/engine/
// fair-share.ts) and jobs to plan, runs them within its concurrency (per worker, and per location),
// renews its leases at a third of their length, and gives up work whose job was canceled. On stop it
// claims nothing more, lets running work finish until a deadline, then aborts the rest and hands it
// back to the queue for another worker. Work it crashes on (an exception outside the attempt, such as
// a settlement the database refused) is settled as a crash, counted towards FERRY_WORK_MAX_CRASHES,
// and work whose lease ran out on its last crash allowed is failed rather than taken back (docs/api.md,
// "Background work that keeps failing"). It writes no state itself: src/lifecycle/ does.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { JobObjectRow, TransferRow } from '../db/schema.js';
import { databaseUnavailable } from '../db/unavailable.js';
import * as jobs from '../lifecycle/jobs.js';
import { nextDue } from '../lifecycle/object-reads.js';
import * as objects from '../lifecycle/objects.js';
import { decodeSpec, locationsOf, workOf } from '../lifecycle/specs.js';
import * as transfers from '../lifecycle/transfers.js';
import { WORKER_LEASES } from '../lifecycle/worker-leases.js';
import { type CrashPolicy, crashMessage, DEFAULT_CRASH_POLICY } from '../queue/backoff.js';
import { handBackAll, renewAll, takeBack } from '../queue/leases.js';
import { msUntil, type RoundContext, WakeLoop } from '../queue/loop.js';
import type { Lease } from '../queue/moves.js';
import { Semaphore } from '../util/semaphore.js';
import { JOB_CANCELED } from './checkpoints.js';
import { FairShare } from './fair-share.js';
import { planJob } from './planner.js';
import { planOf, runObject } from './run-object.js';
import { runTransfer, type TransferContext } from './run-transfer.js';
import { SettleBatcher } from './settle-batch.js';

export interface WorkerOptions {
  /** Objects and transfers running at once in this worker. */
  concurrency: number;
  /** Objects and transfers touching one location at once in this worker. */
  perLocation: number;
  /** Objects and transfers one workspace runs at once, across every worker (fair share). */
  perWorkspace: number;
  leaseMs: number;
  /**
   * The longest an idle worker waits before it looks for work anyway. Accepted work and cancels wake
   * it at once (src/db/signals.ts) and work waiting out a backoff is waited for exactly, so this is
   * only a safety net.
   */
  pollMs: number;
}

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = {
  concurrency: 16,
  perLocation: 16,
  perWorkspace: 32,
  leaseMs: 30_000,
  pollMs: 5000,
};

interface Running {
  controller: AbortController;
  done: Promise<void>;
  jobId?: string;
}

/** What a crash happened on, for its settlement. */
type Crashed = { object: JobObjectRow } | { transfer: TransferRow };

/** How often a worker takes back work whose lease ran out. */
const MAINTENANCE_MS = 5000;

export function workerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

export class Worker {
  readonly #options: WorkerOptions;
  readonly #running = new Map<string, Running>();
  /**
   * Work claimed (leased, renewed with the rest) and waiting for a slot: claims are taken in
   * batches, so this worker holds at most twice its concurrency.
   */
  #ready: Array<{ object: JobObjectRow } | { transfer: TransferRow }> = [];
  readonly #fair: FairShare;
  readonly #settler: SettleBatcher;
  readonly #locations = new Map<string, Semaphore>();
  #planning: Running | undefined;
  readonly #loop: WakeLoop;
  /** Look for a job to plan at the next claim (set by nudges and waits that ran out). */
  #lookForPlanning = true;
  #lastMaintenance = 0;
  #lastHeartbeat = 0;
  /** Crashes whose settlement could not be written yet (the database refused it): tried again at each heartbeat. */
  #unrecorded: Array<{ work: Crashed; message: string }> = [];

  constructor(
    private readonly ctx: TransferContext,
    options: Partial<WorkerOptions> = {},
  ) {
    this.#options = { ...DEFAULT_WORKER_OPTIONS, ...options };
    this.#fair = new FairShare(ctx.db, this.#options.perWorkspace);
    this.#settler = new SettleBatcher(ctx.db, ctx.clock, ctx.owner, this.#options.leaseMs);
    this.#loop = new WakeLoop({
      name: 'worker',
      pollMs: this.#options.pollMs,
      logger: ctx.logger,
      round: (context) => this.round(context),
    });
  }

  get #stopping(): boolean {
    return this.#loop.stopping;
  }

  get owner(): string {
    return this.ctx.owner;
  }

  get #crashPolicy(): CrashPolicy {
    return this.ctx.crashes ?? DEFAULT_CRASH_POLICY;
  }

  /** The options this worker runs with (its settings and the defaults). */
  get options(): Readonly<WorkerOptions> {
    return this.#options;
  }

  start(): void {
    this.#loop.start();
  }

  /** Look for work now (the API calls this after accepting some, in a process that also works). */
  nudge(): void {
    this.#lookForPlanning = true;
    this.#wakeLoop();
  }

  /** Wakes the loop without asking it to look for jobs to plan (a slot came free). */
  #wakeLoop(): void {
    this.#loop.nudge();
  }

  private lease(): Lease {
    const now = this.ctx.clock.now();
    return { owner: this.ctx.owner, now, until: now + this.#options.leaseMs };
  }

  /**
   * Claims what there is room for, then answers how long to wait: not at all while there is room and
   * work came, else until a slot, a wake-up, the next due work or housekeeping. Only a worker with room
   * and nothing to start reads when work is next due: a full one is woken by its next free slot, and
   * reads nothing per finished object.
   */
  private async round({ timedOut }: RoundContext): Promise<number | undefined> {
    // A wait that ran out (a poll, a backoff or planning retry come due) looks for jobs to plan too.
    if (timedOut) this.#lookForPlanning = true;
    let claimed = 0;
    try {
      await this.housekeeping();
      claimed = await this.claim();
    } catch (err) {
      if (databaseUnavailable(err)) {
        // The loop waits it out (src/queue/loop.ts), with one log line; the first round the database
        // answers renews the leases, before they can run out.
        this.#lastHeartbeat = 0;
        throw err;
      }
      this.ctx.logger.error({ err }, 'worker could not claim work');
    }
    if (this.#stopping) return undefined;
    const room = this.#running.size < this.#options.concurrency;
    if (claimed > 0 && room) return 0;
    const idle = claimed === 0 && room && this.#ready.length === 0;
    return this.idleDelay(idle).catch((err: unknown) => {
      if (databaseUnavailable(err)) throw err;
      this.ctx.logger.error({ err }, 'worker could not read when work is next due');
      return this.#options.pollMs;
    });
  }

  /** How long to wait: until the next heartbeat or maintenance, and, when idle, the next due work. */
  private async idleDelay(idle: boolean): Promise<number> {
    const now = this.ctx.clock.now();
    let wake = Math.min(
      now + this.#options.pollMs,
      this.#lastHeartbeat + this.#options.leaseMs / 3,
      this.#lastMaintenance + MAINTENANCE_MS,
    );
    if (idle) {
      const q = this.ctx.db.kysely;
      for (const due of await Promise.all([
        nextDue(q, now),
        transfers.nextDue(q, now),
        jobs.nextPlanningDue(q, now),
      ])) {
        if (due !== undefined) wake = Math.min(wake, due);
      }
    }
    return msUntil(wake, now) ?? 0;
  }

  /**
   * Take back work whose lease has ended at the next round rather than at the next maintenance: the
   * leases of this process's dead predecessor were just ended (src/queue/predecessor.ts).
   */
  maintainNow(): void {
    this.#lastMaintenance = Number.NEGATIVE_INFINITY;
    this.#lookForPlanning = true;
    this.#wakeLoop();
  }

  /** A job was canceled somewhere: stop its objects running here now, not at the next heartbeat. */
  cancelSeen(): void {
    this.abortCanceled().catch((err: unknown) => {
      this.ctx.logger.error({ err }, 'worker could not stop the objects of canceled jobs');
    });
  }

  private async housekeeping(): Promise<void> {
    const now = this.ctx.clock.now();
    if (now - this.#lastHeartbeat >= this.#options.leaseMs / 3) {
      this.#lastHeartbeat = now;
      await renewAll(this.ctx.db.kysely, WORKER_LEASES, this.ctx.owner, now + this.#options.leaseMs);
      await this.abortCanceled();
      await this.recordCrashes();
    }
    if (now - this.#lastMaintenance >= MAINTENANCE_MS) {
      this.#lastMaintenance = now;
      // Work on which every process died or froze, as many times as allowed, is failed, not taken
      // back (docs/api.md, "Background work that keeps failing"); the rest is taken back.
      const { failed, reclaimed } = await takeBack(this.ctx.db.kysely, WORKER_LEASES, now, this.#crashPolicy);
      if (failed > 0) this.ctx.logger.warn({ failed }, 'failed work that kept crashing the worker');
      if (reclaimed > 0) this.ctx.logger.info({ reclaimed }, 'took back work whose lease ran out');
    }
  }

  /**
   * Settles a crash of work this worker holds: tried again after a backoff, or failed on the last
   * crash allowed (the lifecycle decides). When the database refuses that too, the crash waits in
   * #unrecorded for the next heartbeat (the lease is renewed meanwhile, so nobody else runs it).
   */
  private async recordCrash(work: Crashed, message: string): Promise<void> {
    const { db, owner, clock } = this.ctx;
    try {
      if ('transfer' in work) {
        await transfers.crashed(db.kysely, owner, work.transfer.id, message, this.#crashPolicy, clock);
      } else {
        const settlement = await objects.crashed(
          db.kysely,
          owner,
          work.object,
          message,
          this.#crashPolicy,
          clock,
        );
        if (settlement) await this.#settler.settle({ object: work.object, settlement });
      }
    } catch (err) {
      this.ctx.logger.error({ err }, 'could not record a crash; trying again at the next heartbeat');
      this.#unrecorded.push({ work, message });
    }
  }

  private async recordCrashes(): Promise<void> {
    const waiting = this.#unrecorded;
    this.#unrecorded = [];
    for (const { work, message } of waiting) await this.recordCrash(work, message);
  }

  /** In-flight objects of jobs canceled meanwhile are stopped; their rows wait as pending. */
  private async abortCanceled(): Promise<void> {
    const jobIds = new Set<string>();
    for (const r of this.#running.values()) if (r.jobId) jobIds.add(r.jobId);
    for (const r of this.#ready) if ('object' in r) jobIds.add(r.object.job_id);
    const canceled = new Set(await jobs.canceledAmong(this.ctx.db.kysely, [...jobIds]));
    if (canceled.size === 0) return;
    this.#ready = this.#ready.filter((r) => !('object' in r && canceled.has(r.object.job_id)));
    for (const running of this.#running.values()) {
      if (running.jobId && canceled.has(running.jobId)) running.controller.abort(JOB_CANCELED);
    }
    await objects.park(this.ctx.db.kysely, [...canceled], this.ctx.owner);
  }

  private async claim(): Promise<number> {
    let claimed = 0;
    // Jobs to plan are looked for when work was accepted (nudge), a wait ran out or a planner ended,
    // not each time an object finishes and frees a slot.
    if (!this.#planning && this.#lookForPlanning) {
      this.#lookForPlanning = false; // before the read: a nudge during it asks again
      const job = await jobs
        .claimPlanning(this.ctx.db.kysely, this.ctx.db.dialect, this.lease())
        .catch((err: unknown) => {
          this.#lookForPlanning = true;
          throw err;
        });
      if (job) {
        claimed++;
        const controller = new AbortController();
        const done = planJob(this.ctx, job, controller.signal)
          .catch((err: unknown) => this.ctx.logger.error({ err, job: job.id }, 'planner crashed'))
          .finally(() => {
            this.#planning = undefined;
            this.ctx.wakeStreams?.();
            this.nudge();
          });
        this.#planning = { controller, done, jobId: job.id };
      }
    }
    let free = this.#options.concurrency - this.#running.size;
    if (free > 0 && this.#ready.length === 0) {
      // A whole batch at once: one claim of 16 rows costs about what two claims of one row do.
      const batch = await this.#fair.claim(this.lease(), this.#options.concurrency);
      // Single transfers first: they are what a person waits on.
      this.#ready = [
        ...batch.transfers.map((transfer) => ({ transfer })),
        ...batch.objects.map((object) => ({ object })),
      ];
      claimed += this.#ready.length;
      // Claimed transfers are running now.
      if (batch.transfers.length > 0) this.ctx.wakeStreams?.();
    }
    while (free > 0 && this.#ready.length > 0) {
      const next = this.#ready.shift() as { object: JobObjectRow } | { transfer: TransferRow };
      if ('object' in next) this.runObject(next.object);
      else this.runTransfer(next.transfer);
      free--;
    }
    return claimed;
  }

  private semaphore(locationId: string): Semaphore {
    let s = this.#locations.get(locationId);
    if (!s) {
      s = new Semaphore(this.#options.perLocation);
      this.#locations.set(locationId, s);
    }
    return s;
  }

  /** Holds a place at each location (in a fixed order, so two tasks never wait on each other). */
  private async withLocations(ids: string[], work: () => Promise<void>): Promise<void> {
    const releases: Array<() => void> = [];
    try {
      for (const id of [...new Set(ids)].sort()) releases.push(await this.semaphore(id).acquire());
      await work();
    } finally {
      for (const release of releases) release();
    }
  }

  private track(on: Crashed, work: (signal: AbortSignal) => Promise<void>): void {
    const key = 'object' in on ? `${on.object.job_id}/${on.object.seq}` : on.transfer.id;
    const jobId = 'object' in on ? on.object.job_id : undefined;
    const controller = new AbortController();
    const done = work(controller.signal)
      .catch(async (err: unknown) => {
        // The whole error goes to the log; the row keeps a short, clean message (crashMessage).
        this.ctx.logger.error({ err, work: key }, 'work crashed');
        await this.recordCrash(on, crashMessage(err));
      })
      .finally(() => {
        this.#running.delete(key);
        this.ctx.wakeStreams?.();
        this.#wakeLoop();
      });
    this.#running.set(key, { controller, done, ...(jobId ? { jobId } : {}) });
  }

  private runObject(object: JobObjectRow): void {
    this.track({ object }, async (signal) => {
      const work = workOf(object);
      const ids =
        work === null
          ? await planOf(this.ctx, object.job_id).then((plan) => [
              plan.source.location_id,
              plan.destination.location_id,
            ])
          : locationsOf(work);
      await this.withLocations(ids, () =>
        runObject(this.ctx, object, signal, (item) => this.#settler.settle(item)),
      );
    });
  }

  private runTransfer(transfer: TransferRow): void {
    this.track({ transfer }, async (signal) => {
      // Read inside the tracked work: a spec that cannot be read is a crash of this transfer.
      const spec = decodeSpec(transfer);
      const ids =
        spec.kind === 'copy'
          ? [spec.source.location_id, spec.destination.location_id]
          : spec.kind === 'move'
            ? [...spec.sources.map((s) => s.location_id), spec.destination.location_id]
            : spec.kind === 'remove'
              ? spec.paths.map((p) => p.location_id)
              : [spec.destination.location_id];
      await this.withLocations(ids, () => runTransfer(this.ctx, transfer, signal, this.#options.leaseMs));
    });
  }

  /** Stop claiming; wait up to `deadlineMs` for running work, abort the rest and hand it back. */
  async stop(deadlineMs = 30_000): Promise<void> {
    await this.#loop.stop();
    // Claimed but not started: handed back below with everything else this worker holds.
    this.#ready = [];
    const all = () => [...this.#running.values(), ...(this.#planning ? [this.#planning] : [])];
    const settled = Promise.all(all().map((r) => r.done));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      settled.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), deadlineMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      for (const r of all()) r.controller.abort();
      await Promise.all(all().map((r) => r.done));
    }
    await handBackAll(this.ctx.db.kysely, WORKER_LEASES, this.ctx.owner, this.ctx.clock.now());
    await this.ctx.stores.close();
  }
}
