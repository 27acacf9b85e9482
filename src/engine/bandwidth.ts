// Bandwidth caps (docs/api.md, "Bandwidth"): a job's or a single copy's `bandwidth_limit`, and
// FERRY_WORKSPACE_BANDWIDTH over all of a workspace's transfers through ferry. Each cap is one token
// bucket that every process shares through the database: a row of bandwidth_buckets holding the
// bucket's level (bytes) at a time. A process takes a slice (SLICE_MS worth of the rate) with one
// upsert that refills the level for the time passed (never past BURST_SLICES slices: an idle bucket
// saves up one second at most), subtracts the slice and answers the level left. A level below zero is a debt: the process
// waits until the rate has paid it, then lets the slice's bytes through, chunk by chunk, to every copy
// of that cap it runs. So the database sees at most one write per cap per slice per process (a process
// alone gets 1000 / SLICE_MS slices a second; several share them), and a process that dies loses at
// most the slice it held. The grant is one statement, atomic on both databases (a row lock on
// PostgreSQL, the write lock on SQLite), so no two processes can take the same bytes.
//
// A chunk larger than what is left of the local slice still goes (the local level goes below zero)
// and the next chunk waits for as many slices as it took: over time the rate holds exactly, and a
// process is ahead by at most one chunk.
import { sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import { FerryError } from '../errors.js';
import type { Logger } from '../log.js';
import { bothThrottles, sleep, type Throttle, untilSettled } from '../objects/throttle.js';

/** Each grant from the database is this long at the cap's rate. */
export const SLICE_MS = 250;
/**
 * The most a bucket saves up while nobody asks, in slices (one second): enough that a process slowed
 * for a moment (a busy database, a stalled event loop) does not lose the rate meanwhile, and little
 * enough that an idle cap lets at most one second's worth through at once.
 */
export const BURST_SLICES = 4;

/** Rows of caps unused this long are deleted (by whichever process next takes a grant). */
const STALE_MS = 10 * 60_000;
/** A process deletes stale rows at most this often. */
const PRUNE_EVERY_MS = 60_000;
/** Buckets a process keeps in memory before it forgets the idle ones. */
const LOCAL_BUCKETS = 1000;

export interface CapsOf {
  workspaceId: string;
  /** The work's own cap: `job:<id>` or `transfer:<id>`, and its rate (null or undefined: none). */
  key?: string;
  limit?: number | null;
}

/** One cap's bucket in this process: the bytes of its current slice, and the grant under way. */
class LocalBucket {
  #available = 0;
  #grant: Promise<void> | undefined;
  #waited = 0;
  lastUsed = 0;

  constructor(
    readonly key: string,
    readonly rate: number,
    private readonly grant: (key: string, rate: number, slice: number) => Promise<number>,
    private readonly clock: Clock,
  ) {}

  get slice(): number {
    return Math.max(1, Math.floor((this.rate * SLICE_MS) / 1000));
  }

  get idle(): boolean {
    return this.#grant === undefined;
  }

  /** Milliseconds of waiting for the rate this bucket has asked for, in all. */
  get waited(): number {
    return this.#waited;
  }

  readonly take: Throttle = async (bytes, signal) => {
    this.lastUsed = this.clock.now();
    while (this.#available <= 0) {
      // One grant at a time, shared by every copy waiting here; an aborted copy stops waiting at
      // once and leaves the grant to the others.
      this.#grant ??= this.#fetch().finally(() => {
        this.#grant = undefined;
      });
      await untilSettled(this.#grant, signal);
    }
    this.#available -= bytes;
  };

  async #fetch(): Promise<void> {
    const slice = this.slice;
    let level: number;
    try {
      level = await this.grant(this.key, this.rate, slice);
    } catch (err) {
      throw new FerryError('transient', 'the bandwidth cap could not be read from the database', {
        cause: err,
      });
    }
    // In debt: wait (a timer) until the rate has paid for this slice and whatever was granted before it.
    if (level < 0) {
      const ms = Math.ceil((-level * 1000) / this.rate);
      this.#waited += ms;
      await sleep(ms);
    }
    this.#available += slice;
  }
}

export class Bandwidth {
  readonly #buckets = new Map<string, LocalBucket>();
  #lastPrune = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** FERRY_WORKSPACE_BANDWIDTH in bytes per second; undefined: no workspace cap. */
    readonly workspaceLimit: number | undefined,
    private readonly logger?: Logger,
  ) {}

  /** The workspace's cap alone (files through ferry), or undefined when there is none. */
  forWorkspace(workspaceId: string): Throttle | undefined {
    if (this.workspaceLimit === undefined) return undefined;
    return this.bucket(`workspace:${workspaceId}`, this.workspaceLimit).take;
  }

  /**
   * Milliseconds this process has waited for the rate of `key`'s cap (`workspace:<id>`, `job:<id>`,
   * `transfer:<id>`), in all: read-only, for tests to bound the waits by the bytes let through.
   */
  waitedFor(key: string): number {
    return this.#buckets.get(key)?.waited ?? 0;
  }

  /** Every cap a transfer or a job's object waits for: its own (when it has one), then its workspace's. */
  throttleFor(caps: CapsOf): Throttle | undefined {
    const own =
      caps.key !== undefined && caps.limit !== undefined && caps.limit !== null
        ? this.bucket(caps.key, Number(caps.limit)).take
        : undefined;
    return bothThrottles(own, this.forWorkspace(caps.workspaceId));
  }

  private bucket(key: string, rate: number): LocalBucket {
    const known = this.#buckets.get(key);
    if (known !== undefined && known.rate === rate) return known;
    if (this.#buckets.size >= LOCAL_BUCKETS) {
      const cutoff = this.clock.now() - STALE_MS;
      for (const [k, b] of this.#buckets) if (b.idle && b.lastUsed < cutoff) this.#buckets.delete(k);
    }
    const bucket = new LocalBucket(key, rate, (k, r, s) => this.grant(k, r, s), this.clock);
    // Past the bound with every bucket busy, a new cap still works, only without a place here.
    if (this.#buckets.size < LOCAL_BUCKETS) this.#buckets.set(key, bucket);
    return bucket;
  }

  /**
   * Takes a slice of `key`'s bucket at `rate` bytes a second; answers the level left (negative: the
   * bytes owed, to be waited for at the rate before the slice is used).
   */
  async grant(key: string, rate: number, slice: number): Promise<number> {
    const now = this.clock.now();
    await this.prune(now);
    const q = this.db.kysely;
    // A new bucket starts with one slice, taken at once; a bucket never saves up more than the burst.
    const burst = slice * BURST_SLICES;
    const { rows } =
      this.db.dialect === 'postgres'
        ? await sql<{ tokens: number }>`
            insert into bandwidth_buckets (key, tokens, at) values (${key}, 0, cast(${now} as bigint))
            on conflict (key) do update set
              tokens = least(cast(${burst} as double precision),
                             bandwidth_buckets.tokens
                             + greatest(0, cast(${now} as bigint) - bandwidth_buckets.at)
                               * cast(${rate} as double precision) / 1000.0)
                       - cast(${slice} as double precision),
              at = greatest(bandwidth_buckets.at, cast(${now} as bigint))
            returning tokens`.execute(q)
        : await sql<{ tokens: number }>`
            insert into bandwidth_buckets (key, tokens, at) values (${key}, 0, ${now})
            on conflict (key) do update set
              tokens = min(${burst}, bandwidth_buckets.tokens
                                     + max(0, ${now} - bandwidth_buckets.at) * ${rate} / 1000.0) - ${slice},
              at = max(bandwidth_buckets.at, ${now})
            returning tokens`.execute(q);
    return Number(rows[0]?.tokens ?? 0);
  }

  /** Deletes the rows of caps nobody used for STALE_MS (finished jobs), at most once a minute. */
  private async prune(now: number): Promise<void> {
    if (now - this.#lastPrune < PRUNE_EVERY_MS) return;
    this.#lastPrune = now;
    await this.db.kysely
      .deleteFrom('bandwidth_buckets')
      .where('at', '<', now - STALE_MS)
      .execute()
      .catch((err: unknown) => this.logger?.warn({ err }, 'could not delete unused bandwidth buckets'));
  }
}
