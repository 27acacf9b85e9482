// Live progress (docs/api.md, "Live progress"): GET /v1/events streams the changes of the caller's
// jobs, transfers and sends as Server-Sent Events. A stream reads when the engine says it wrote (the
// `changes`, `work` and `cancel` wake-ups of src/db/signals.ts, from any process), never on a tight
// poll; its heartbeat every 15 s reads once too, as the slow safety net every wake-up has. Open streams
// end when the server closes, so that a shutdown never waits on them.
import { PassThrough } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EventStream, EventsQuery } from '../../api/streams.js';
import type { Clock } from '../../clock.js';
import type { Channel, Signals } from '../../db/signals.js';
import type { Caller } from '../../domain/caller.js';
import type { ChangeReader } from '../../domain/events/feed.js';
import type { KeyWatch } from '../../domain/key-watch.js';
import { FerryError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { principalOf } from '../auth.js';
import { errors } from '../schemas.js';

/** Open streams one workspace may hold in one process. */
export const STREAMS_PER_WORKSPACE = 8;
/** How long a closing server waits for the streams' connections to close before it destroys them. */
const CLOSE_GRACE_MS = 2000;
/** A comment line this often keeps proxies from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;
/**
 * How far before its last read a stream reads again: a row written by another process whose clock is
 * a little behind, or committed a moment after it took its time, is still seen.
 */
const OVERLAP_MS = 5000;
/** A client that reads nothing while this much waits for it is cut off (it may reconnect). */
const MAX_BUFFERED = 1024 * 1024;
const WAKE_ON: readonly Channel[] = ['changes', 'work', 'cancel'];

export interface EventRouteDeps {
  changes: ChangeReader;
  signals: Signals;
  clock: Clock;
  logger: Logger;
  keyWatch: KeyWatch;
}

/** One client's stream: what it was sent (to send only what changed) and since when it has read. */
class Feed {
  readonly #sent = new Map<string, string>();
  #since: number;
  #reading = false;
  #again = false;
  #closed = false;

  constructor(
    private readonly deps: EventRouteDeps,
    private readonly caller: Caller,
    private readonly out: PassThrough,
    since: number,
  ) {
    this.#since = since;
  }

  /** Reads what changed and sends it; a wake-up during a read makes one more read after it. */
  wake(): void {
    if (this.#closed) return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = true;
    void this.#read().finally(() => {
      this.#reading = false;
    });
  }

  async #read(): Promise<void> {
    do {
      this.#again = false;
      const startedAt = this.deps.clock.now();
      let changes: Awaited<ReturnType<ChangeReader['read']>>;
      try {
        changes = await this.deps.changes.read(this.caller, this.#since - OVERLAP_MS);
      } catch (err) {
        this.deps.logger.warn({ err }, 'event stream could not read changes');
        return;
      }
      if (this.#closed) return;
      this.#since = startedAt;
      const seen = new Set<string>();
      for (const change of changes) {
        const key = `${change.event}:${change.id}`;
        const json = JSON.stringify(change.data);
        seen.add(key);
        if (this.#sent.get(key) === json) continue;
        this.#sent.set(key, json);
        this.write(`event: ${change.event}\ndata: ${json}\n\n`);
      }
      // What the read no longer answers is finished and older than the overlap: if it changes again
      // (a retried job), it is read as written, and sent.
      for (const key of this.#sent.keys()) if (!seen.has(key)) this.#sent.delete(key);
    } while (this.#again && !this.#closed);
  }

  write(text: string): void {
    if (this.#closed) return;
    if (this.out.writableLength > MAX_BUFFERED) {
      this.out.end();
      return;
    }
    this.out.write(text);
  }

  close(): void {
    this.#closed = true;
  }

  get closed(): boolean {
    return this.#closed;
  }
}

export const eventRoutes =
  (deps: EventRouteDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const open = new Map<string, Set<PassThrough>>();
    /** Each open response, until its connection has closed, with the connection's socket. */
    const responses = new Map<Promise<void>, { destroy(): void }>();
    /** Set once the server is closing: a stream asked for meanwhile is refused (503). */
    let closing = false;

    // Before the server stops taking connections: an open stream is never idle, and would hold
    // close() until the client went away. Ended, each response closes its connection (below), and
    // close() goes on once they have; a connection still open CLOSE_GRACE_MS later (a client that
    // reads no more) is destroyed, so that no client can hold the shutdown (seen once in a test run:
    // Fastify's 10 s limit on a preClose hook ran out).
    app.addHook('preClose', async () => {
      closing = true;
      for (const streams of open.values()) for (const stream of streams) stream.end();
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_GRACE_MS);
      });
      await Promise.race([Promise.all(responses.keys()), grace]);
      clearTimeout(timer);
      for (const socket of responses.values()) socket.destroy();
    });

    app.get(
      '/v1/events',
      {
        // A stream takes one of the workspace's slots and listens from the handler on: only for a
        // confirmed key (src/http/auth.ts).
        config: { scope: 'read', authFirst: true },
        schema: {
          summary: 'Stream the changes of your jobs, transfers and sends (Server-Sent Events)',
          tags: ['transfers'],
          querystring: EventsQuery,
          response: {
            200: {
              description:
                'text/event-stream: events `job`, `transfer` and `send`, each with the JSON that the GET of that object answers',
              content: { 'text/event-stream': { schema: EventStream } },
            },
            ...errors(400, 401, 429, 503),
          },
        },
      },
      async (request, reply) => {
        const caller = principalOf(request);
        const { workspaceId, keyId } = caller;
        // Asked for before the server began closing, its key confirmed after: preClose has ended the
        // streams already, and would not end this one.
        if (closing) throw new FerryError('unavailable', 'ferry is shutting down', { retryAfterSeconds: 5 });
        const streams = open.get(workspaceId) ?? new Set<PassThrough>();
        if (streams.size >= STREAMS_PER_WORKSPACE) {
          throw new FerryError(
            'rate_limited',
            `at most ${STREAMS_PER_WORKSPACE} event streams may be open per workspace; close one`,
            { retryAfterSeconds: 5 },
          );
        }
        const now = deps.clock.now();
        const since = request.query.since === undefined ? now : Date.parse(request.query.since);
        const out = new PassThrough();
        const feed = new Feed(deps, caller, out, Math.min(since, now));
        streams.add(out);
        open.set(workspaceId, streams);

        const unlisten = WAKE_ON.map((channel) => deps.signals.listen(channel, () => feed.wake()));
        const heartbeat = setInterval(() => {
          feed.write(': heartbeat\n\n');
          feed.wake();
        }, HEARTBEAT_MS);
        // The stream ends with its key (docs/api.md, "Live progress"): a last `end` event says why, in
        // the shape of the 401 the next request with that key gets.
        const unwatch = deps.keyWatch.watch(keyId, (reason) => {
          feed.write(`event: end\ndata: ${JSON.stringify({ error: 401, message: reason })}\n\n`);
          out.end();
        });
        const stop = () => {
          if (feed.closed) return;
          feed.close();
          unwatch();
          clearInterval(heartbeat);
          for (const off of unlisten) off();
          streams.delete(out);
          if (streams.size === 0) open.delete(workspaceId);
        };
        out.on('close', stop);
        out.on('end', stop);
        // The response closes when the client goes away (or after the end at shutdown). A client gone
        // already, while its key was being confirmed, gets no 'close' any more: it is let go at once,
        // or its stream would stay open (counted against the workspace) and hold the shutdown.
        const closed = new Promise<void>((resolve) => {
          const gone = () => {
            out.destroy();
            responses.delete(closed);
            resolve();
          };
          const socket = reply.raw.socket;
          if (reply.raw.destroyed || socket === null || socket.destroyed) queueMicrotask(gone);
          else reply.raw.once('close', gone);
        });
        responses.set(closed, reply.raw.socket ?? reply.raw);

        // The first lines go at once, so the client sees the stream open before anything changes.
        feed.write('retry: 3000\n: open\n\n');
        feed.wake();
        return (
          reply
            .header('content-type', 'text/event-stream; charset=utf-8')
            .header('cache-control', 'no-store')
            .header('x-accel-buffering', 'no')
            // A stream's connection is never reused: closed with it, it cannot linger after shutdown.
            .header('connection', 'close')
            .send(out)
        );
      },
    );
  };
