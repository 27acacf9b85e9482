// Wake-ups between processes: "there is new work", "a refresh was requested", "a job was canceled"
// and "progress was written" (which the event streams of docs/api.md, "Live progress", wait on) reach
// every process at once instead of at its next poll, and "a key or a workspace's locations changed"
// (sent by database triggers) reaches every process's authentication cache. On PostgreSQL they travel
// as NOTIFY on channels named for the schema (so databases that share a server, such as test schemas,
// do not wake each other), received by one LISTEN connection per process that reconnects after the
// database restarts and then wakes every listener once, for what it may have missed. On SQLite, which
// is one process, they are an in-process event. Polls stay as a slow safety net: a wake-up is a hint,
// never the only way in.
import { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from '../log.js';
import type { Secret } from '../secret.js';
import type { Db } from './database.js';

/**
 * `auth` is sent only by database triggers (`key:<id>`, `ws:<id>`); `webhook` also by a trigger when
 * webhook messages are queued (src/queue/outbox.ts).
 */
export type Channel = 'work' | 'refresh' | 'cancel' | 'changes' | 'auth' | 'webhook' | 'schedules';
const CHANNELS: readonly Channel[] = ['work', 'refresh', 'cancel', 'changes', 'auth', 'webhook', 'schedules'];

export interface Signals {
  /** Wakes the listeners of `channel` in every process, this one included. */
  notify(channel: Channel): void;
  /**
   * notify(channel), at most once per `intervalMs` in this process: the first call at once, the calls
   * within the interval as one at its end. For wake-ups sent at every write (progress), which would
   * otherwise be a NOTIFY each.
   */
  notifyAtMost(channel: Channel, intervalMs: number): void;
  /**
   * Calls `listener` at each wake-up of `channel` with its payload (empty after a reconnection, when
   * anything may have been missed); returns the function that stops it.
   */
  listen(channel: Channel, listener: (payload: string) => void): () => void;
  /**
   * While every signal sent by any process is sure to arrive, a number that stays the same; undefined
   * while it is not (the listening connection is down or not yet up). Caches that other processes'
   * writes invalidate are used only while it holds one value.
   */
  generation(): number | undefined;
  /**
   * Resolves true once every signal committed before the call has reached this process's listeners:
   * on PostgreSQL, after a round trip on the listening connection that began after the call (the
   * server sends pending notifications before it answers). Calls that arrive while one is in flight
   * share the next one. False when that cannot be known (the connection is down).
   */
  barrier(): Promise<boolean>;
  close(): Promise<void>;
}

export function createSignals(db: Db, databaseUrl: Secret | undefined, logger: Logger): Signals {
  return db.dialect === 'postgres' && databaseUrl
    ? new PgSignals(db, databaseUrl, logger)
    : new LocalSignals();
}

/** One process: an event emitter. */
class LocalSignals implements Signals {
  protected readonly events = new EventEmitter().setMaxListeners(0);
  /** Per throttled channel: when it was last sent, and the timer of the one held back. */
  readonly #throttle = new Map<Channel, { last: number; timer: NodeJS.Timeout | undefined }>();

  notify(channel: Channel): void {
    queueMicrotask(() => this.events.emit(channel, ''));
  }

  notifyAtMost(channel: Channel, intervalMs: number): void {
    const state = this.#throttle.get(channel) ?? { last: -Infinity, timer: undefined };
    this.#throttle.set(channel, state);
    if (state.timer) return;
    const wait = state.last + intervalMs - performance.now();
    const send = () => {
      state.timer = undefined;
      state.last = performance.now();
      this.notify(channel);
    };
    if (wait <= 0) send();
    else state.timer = setTimeout(send, wait);
  }

  generation(): number | undefined {
    return 0;
  }

  async barrier(): Promise<boolean> {
    return true;
  }

  listen(channel: Channel, listener: (payload: string) => void): () => void {
    this.events.on(channel, listener);
    return () => this.events.off(channel, listener);
  }

  async close(): Promise<void> {
    for (const state of this.#throttle.values()) clearTimeout(state.timer);
    this.#throttle.clear();
    this.events.removeAllListeners();
  }
}

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5000;

/** Many processes on one PostgreSQL: NOTIFY out through the pool, LISTEN on a connection of its own. */
class PgSignals extends LocalSignals {
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #prefix: Promise<string> | undefined;
  #closed = false;
  #delay = RECONNECT_MIN_MS;
  #timer: NodeJS.Timeout | undefined;
  #generation = 0;
  /** The connection was lost and is not back yet (its loss was logged). */
  #lost = false;
  /** The barrier round trip in flight, and the one that callers arriving during it wait for. */
  #inFlight: Promise<boolean> | undefined;
  #next: Promise<boolean> | undefined;

  constructor(
    private readonly db: Db,
    private readonly url: Secret,
    private readonly logger: Logger,
  ) {
    super();
  }

  override notify(channel: Channel): void {
    // Listeners in this process hear it at once; the others through the database.
    super.notify(channel);
    this.#channel(channel)
      .then((name) => sql`select pg_notify(${name}, '')`.execute(this.db.kysely))
      .catch((err: unknown) => this.logger.warn({ err, channel }, 'could not send a wake-up'));
  }

  override generation(): number | undefined {
    return this.#client ? this.#generation : undefined;
  }

  override barrier(): Promise<boolean> {
    if (!this.#client) return Promise.resolve(false);
    if (this.#next) return this.#next;
    if (!this.#inFlight) return this.#roundTrip();
    // The one in flight may have been sent before this call: wait for it, then take the next.
    this.#next = this.#inFlight.then(() => {
      this.#next = undefined;
      return this.#roundTrip();
    });
    return this.#next;
  }

  #roundTrip(): Promise<boolean> {
    const client = this.#client;
    if (!client) return Promise.resolve(false);
    // An empty query: nothing to parse or plan, and it still ends with ReadyForQuery, before which
    // the server sends every notification it has received (postgres.c, PostgresMain: "if any
    // notifies were received during the just-finished transaction, they'll be seen by the client
    // before ReadyForQuery is"; while idle it sends them at once). 20-70 µs less than `select 1` here.
    const trip: Promise<boolean> = client
      .query('')
      .then(
        () => this.#client === client,
        () => false,
      )
      .finally(() => {
        if (this.#inFlight === trip) this.#inFlight = undefined;
      });
    this.#inFlight = trip;
    return trip;
  }

  override listen(channel: Channel, listener: (payload: string) => void): () => void {
    const stop = super.listen(channel, listener);
    void this.#connect();
    return stop;
  }

  /** ferry_<schema>_<channel>: NOTIFY is per database, the schema tells ferry's databases apart. */
  #channel(channel: Channel): Promise<string> {
    this.#prefix ??= sql<{ schema: string }>`select current_schema() as schema`
      .execute(this.db.kysely)
      .then((r) => `ferry_${(r.rows[0]?.schema ?? 'public').toLowerCase().replace(/[^a-z0-9_]/g, '_')}`);
    return this.#prefix.then((prefix) => `${prefix}_${channel}`.slice(0, 63));
  }

  #connect(): Promise<void> {
    if (this.#client || this.#closed) return Promise.resolve();
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #open(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url.reveal() });
    const lost = (err?: unknown) => {
      if (this.#client !== client) return;
      this.#client = undefined;
      client.removeAllListeners();
      // A dying connection can report more than one error (the server's, then the socket's end):
      // the later ones, unheard, would end the process.
      client.on('error', () => {});
      client.end().catch(() => {});
      if (this.#closed) return;
      // Once per outage: the tries to reconnect that fail while the database is away say nothing more.
      if (!this.#lost) this.logger.warn({ err }, 'wake-up connection lost; reconnecting');
      this.#lost = true;
      this.#timer = setTimeout(() => void this.#connect(), this.#delay);
      this.#delay = Math.min(RECONNECT_MAX_MS, this.#delay * 2);
    };
    try {
      const names = await Promise.all(CHANNELS.map((c) => this.#channel(c)));
      await client.connect();
      client.on('error', lost);
      client.on('end', () => lost());
      client.on('notification', (message) => {
        const channel = CHANNELS[names.indexOf(message.channel)];
        if (channel) this.events.emit(channel, message.payload ?? '');
      });
      for (const name of names) await client.query(`listen "${name}"`);
      if (this.#closed) {
        await client.end();
        return;
      }
      this.#generation++;
      this.#client = client;
      this.#delay = RECONNECT_MIN_MS;
      if (this.#lost) this.logger.info('wake-up connection back');
      this.#lost = false;
    } catch (err) {
      this.#client = client;
      lost(err);
      return;
    }
    // Whatever was sent while this process was not listening (before its first connection too): one
    // wake-up of each channel.
    for (const channel of CHANNELS) this.events.emit(channel, '');
  }

  override async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#connecting;
    const client = this.#client;
    this.#client = undefined;
    client?.removeAllListeners();
    await client?.end().catch(() => {});
    await super.close();
  }
}
