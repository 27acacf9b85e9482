// Authentication without a database read per request (docs/engine.md, "Authentication cache"). Each
// process keeps the keys it has authenticated and each workspace's locations_version, and forgets one
// the moment a database trigger reports that it changed, whichever process wrote it: on PostgreSQL
// through NOTIFY on the listening connection, on SQLite through a function its triggers call. While
// that report is not sure to arrive (the listening connection is down, or another process committed
// to the SQLite file) nothing is served from the cache, so a revoked key fails at the next request.
import type { Scope } from '../api/keys.js';
import type { Db } from '../db/database.js';
import type { Signals } from '../db/signals.js';

export interface Invalidations {
  /**
   * The same value while no change can have been missed up to the last barrier() that answered;
   * undefined while the cache must not be used.
   */
  epoch(): number | undefined;
  /** The epoch as of now: what epoch() would be after a barrier that began now (SQLite: one read). */
  now(): number | undefined;
  /** `kind` is `key` or `ws` with the row's id; anything else means "forget everything". */
  subscribe(listener: (kind: string, id: string) => void): () => void;
  /**
   * True once every change committed before the call has been reported here (Signals.barrier); false
   * when that cannot be known.
   */
  barrier(): Promise<boolean>;
  /**
   * Whether barrier() can take a wait (a round trip) worth overlapping with other work; on SQLite it
   * waits for the end of the turn only.
   */
  readonly barrierWaits: boolean;
}

export function invalidationsFor(db: Db, signals: Signals): Invalidations {
  const rows = db.rowChanges;
  if (rows) {
    // This process's triggers report inside the write itself; other processes' commits move
    // data_version, and the epoch with it. data_version is read once per turn of the event loop, after
    // the turn's requests have been read (setImmediate runs after the I/O callbacks): every request of
    // the turn waits for that one read, which began after it arrived, as a barrier on PostgreSQL does.
    // One read per request was 7% of the server's CPU per authenticated request (docs/performance.md,
    // "bench/api").
    let seen = rows.dataVersion();
    let epoch = 0;
    let pending: Promise<boolean> | undefined;
    const now = () => {
      const version = rows.dataVersion();
      if (version !== seen) {
        seen = version;
        epoch++;
      }
      return epoch;
    };
    const check = (resolve: (heard: boolean) => void) => {
      pending = undefined;
      now();
      resolve(true);
    };
    return {
      epoch: () => epoch,
      now,
      subscribe: (listener) => rows.subscribe(listener),
      barrier: () => {
        pending ??= new Promise((resolve) => setImmediate(check, resolve));
        return pending;
      },
      barrierWaits: false,
    };
  }
  return {
    epoch: () => signals.generation(),
    now: () => signals.generation(),
    barrier: () => signals.barrier(),
    barrierWaits: true,
    subscribe: (listener) =>
      signals.listen('auth', (payload) => {
        const colon = payload.indexOf(':');
        listener(colon < 0 ? '' : payload.slice(0, colon), payload.slice(colon + 1));
      }),
  };
}

export interface CachedKey {
  keyId: string;
  workspaceId: string;
  expiresAt: number | null;
  lastUsedAt: number | null;
  /** Fixed when the key is created (docs/api.md, "Scopes"). */
  scopes: ReadonlySet<Scope>;
  /** Likewise; null: every location of the workspace. */
  locations: ReadonlySet<string> | null;
}

const MAX_KEYS = 10_000;
const MAX_WORKSPACES = 10_000;

export class AuthCache {
  readonly #keys = new Map<string, CachedKey>();
  readonly #versions = new Map<string, number>();
  #epoch: number | undefined;
  /**
   * Counts what was forgotten, and when each key, workspace, or everything was last forgotten: a read
   * that began before a change to its rows must not be stored after it.
   */
  #seq = 0;
  #clearedAt = 0;
  readonly #keysForgotten = new Map<string, number>();
  readonly #workspacesForgotten = new Map<string, number>();
  readonly #unsubscribe: () => void;
  /** Lookups answered here, and those that went to the database. */
  hits = 0;
  misses = 0;

  constructor(private readonly source: Invalidations) {
    this.#unsubscribe = source.subscribe((kind, id) => {
      if (kind === 'key') this.forgetKey(id);
      else if (kind === 'ws') this.forgetWorkspace(id);
      else this.#clear();
    });
  }

  /**
   * The key behind a token hash and its workspace's locations_version, while both are exact. A hit
   * first waits for the barrier (the one `early` started as the request arrived, if given): every
   * change committed before it began, by any process, has then been heard, so a key revoked before
   * this request arrived is never answered from here.
   */
  async lookup(
    tokenHash: string,
    barrier?: Promise<boolean>,
  ): Promise<{ key: CachedKey; version: number } | undefined> {
    const found = this.#keys.has(tokenHash) ? await this.#find(tokenHash, barrier) : undefined;
    if (found) this.hits++;
    else this.misses++;
    return found;
  }

  /** False where early() never answers (SQLite), so a caller need not hash the token for it. */
  get overlaps(): boolean {
    return this.source.barrierWaits;
  }

  /**
   * For a request that may start before its key is confirmed (src/http/auth.ts): the key cached now,
   * unconfirmed, and the barrier started now, which `lookup(tokenHash, barrier)` then waits for.
   * Undefined when the key is not cached, and where the barrier costs no wait (SQLite): there
   * `lookup` answers at once and there is nothing to overlap.
   */
  early(tokenHash: string): { key: CachedKey; barrier: Promise<boolean> } | undefined {
    if (!this.source.barrierWaits) return undefined;
    const key = this.#keys.get(tokenHash);
    if (!key) return undefined;
    return this.#current() ? { key, barrier: this.source.barrier() } : undefined;
  }

  async #find(
    tokenHash: string,
    started: Promise<boolean> | undefined,
  ): Promise<{ key: CachedKey; version: number } | undefined> {
    if (!(await (started ?? this.source.barrier()))) {
      this.#clear();
      return undefined;
    }
    if (!this.#current()) return undefined;
    const key = this.#keys.get(tokenHash);
    if (!key) return undefined;
    const version = this.#versions.get(key.workspaceId);
    return version === undefined ? undefined : { key, version };
  }

  /** Taken before reading the rows that `put` will store. */
  ticket(): number {
    this.#current(this.source.now());
    return this.#seq;
  }

  /** Stores what was read, unless something changed (or could have) since the ticket was taken. */
  put(ticket: number, tokenHash: string, key: CachedKey, version: number): void {
    if (!this.#current(this.source.now()) || this.#clearedAt > ticket) return;
    if ((this.#keysForgotten.get(key.keyId) ?? 0) > ticket) return;
    if ((this.#workspacesForgotten.get(key.workspaceId) ?? 0) > ticket) return;
    if (this.#keys.size >= MAX_KEYS) this.#keys.delete(this.#keys.keys().next().value as string);
    if (this.#versions.size >= MAX_WORKSPACES)
      this.#versions.delete(this.#versions.keys().next().value as string);
    this.#keys.set(tokenHash, key);
    this.#versions.set(key.workspaceId, version);
  }

  forgetKey(keyId: string): void {
    this.#forgotten(this.#keysForgotten, keyId);
    for (const [hash, key] of this.#keys) if (key.keyId === keyId) this.#keys.delete(hash);
  }

  forgetWorkspace(workspaceId: string): void {
    this.#forgotten(this.#workspacesForgotten, workspaceId);
    this.#versions.delete(workspaceId);
  }

  close(): void {
    this.#unsubscribe();
    this.#clear();
  }

  /** Whether nothing can have been missed since the cache was filled; forgets everything if not. */
  #current(epoch = this.source.epoch()): boolean {
    if (epoch === this.#epoch && epoch !== undefined) return true;
    this.#clear();
    this.#epoch = epoch;
    return epoch !== undefined;
  }

  #clear(): void {
    this.#clearedAt = ++this.#seq;
    this.#keys.clear();
    this.#versions.clear();
    this.#keysForgotten.clear();
    this.#workspacesForgotten.clear();
  }

  #forgotten(marks: Map<string, number>, id: string): void {
    // Past the bound, forgetting everything keeps the rule with no marks at all.
    if (marks.size >= MAX_KEYS) this.#clear();
    marks.set(id, ++this.#seq);
  }
}
