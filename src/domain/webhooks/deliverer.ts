// Delivers webhook messages (docs/webhooks.md, "Delivery"): worker processes claim due messages of
// enabled endpoints with a lease (one UPDATE … RETURNING, FOR UPDATE SKIP LOCKED on PostgreSQL, like
// transfer claims), so two processes never make the same attempt; POST the body with the Standard
// Webhooks headers through the egress guard; and record the attempt, the message's next try or its
// end, and the endpoint's failure streak in one transaction that checks the lease. Those writes are
// the moves of src/lifecycle/webhooks.ts (docs/engine.md, "Webhook messages"). Any 2xx delivers;
// other answers, timeouts and connection failures are tried again on the schedule (schedule.ts) for a
// day; an endpoint that failed for a day is disabled. A crash between the answer and the record
// delivers the message again, with the same webhook-id, which receivers use to drop duplicates; a
// process that stops cuts its attempts short and hands their messages back.
//
// Attempts are independent (docs/api.md, "Outbound calls"): each claimed message is delivered on its
// own, at most `concurrency` at once in the process and `perEndpoint` at once to one endpoint, and the
// loop claims again whenever a slot frees, so a slow endpoint holds only its own slots. An attempt is
// bounded as a whole, reading of the answer included, and reads at most ANSWER_LIMIT bytes of it; one
// that runs out of time is a failed attempt (`timeout`). An attempt that crashes (an exception in
// ferry, or a process that died holding the lease) counts in `crashes`; a message that crashed
// `maxCrashes` times is failed instead of being claimed again forever.

import type { Readable } from 'node:stream';
import { Counter, type Registry } from 'prom-client';
import { request } from 'undici';
import type { Clock } from '../../clock.js';
import type { Keyring } from '../../crypto/envelope.js';
import type { Db } from '../../db/database.js';
import type { WebhookMessageRow, WebhookRow } from '../../db/schema.js';
import { databaseUnavailable } from '../../db/unavailable.js';
import { FerryError } from '../../errors.js';
import * as lifecycle from '../../lifecycle/webhooks.js';
import type { Logger } from '../../log.js';
import type { Egress } from '../../net/egress.js';
import { msUntil, WakeLoop } from '../../queue/loop.js';
import { queuedHere } from '../../queue/outbox.js';
import { DAY_MS, nextAttemptAt } from './schedule.js';
import { signedHeaders } from './signing.js';
import { secretContext } from './webhooks.js';

export interface DelivererDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  keyring: Keyring;
  egress: Egress;
  owner: string;
  registry: Registry;
  random?: () => number;
}

export interface DelivererOptions {
  /** The longest sleep between looks when no wake-up comes. */
  pollMs: number;
  /** One attempt's limit, from connecting to the end of the answer (FERRY_WEBHOOK_TIMEOUT_SECONDS). */
  timeoutMs: number;
  /** Attempts this process makes at once (FERRY_WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** Attempts this process makes at once to one endpoint (FERRY_WEBHOOK_ENDPOINT_CONCURRENCY). */
  perEndpoint: number;
  /** Crashed attempts after which a message is failed (FERRY_WORK_MAX_CRASHES). */
  maxCrashes: number;
}

export const DELIVERER_DEFAULTS: DelivererOptions = {
  pollMs: 30_000,
  timeoutMs: 15_000,
  concurrency: 16,
  perEndpoint: 2,
  maxCrashes: 3,
};
/** The bytes of an endpoint's answer that are read; the rest is not (the connection is closed). */
export const ANSWER_LIMIT = 4096;
/** The lease outlasts the attempt's bound by this much, for recording it. */
const LEASE_MARGIN_MS = 60_000;

/** What became of one attempt. */
type Result = { statusCode: number; error?: undefined } | { statusCode?: undefined; error: string };

export class WebhookDeliverer {
  readonly #deliveries: Counter<'outcome'>;
  readonly #options: DelivererOptions;
  readonly #loop: WakeLoop;
  #ticking: Promise<void> | undefined;
  /** The claim in progress: one at a time, so the slots it counts are the slots there are. */
  #filling: Promise<void> | undefined;
  /** Attempts in flight in this process, and how many of them go to each endpoint. */
  readonly #running = new Set<Promise<void>>();
  readonly #perEndpoint = new Map<string, number>();
  /** Aborts the attempts in flight when the process stops: they are handed back, not counted. */
  readonly #stopped = new AbortController();
  readonly #onQueued = () => this.nudge();

  constructor(
    private readonly deps: DelivererDeps,
    options: Partial<DelivererOptions> = {},
  ) {
    this.#options = { ...DELIVERER_DEFAULTS, ...options };
    this.#deliveries = new Counter({
      name: 'ferry_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (delivered, retried, failed: given up after a day)',
      labelNames: ['outcome'] as const,
      registers: [deps.registry],
    });
    this.#loop = new WakeLoop({
      name: 'webhook deliverer',
      pollMs: this.#options.pollMs,
      logger: deps.logger,
      round: () => this.#round(),
    });
  }

  get #stopping(): boolean {
    return this.#loop.stopping;
  }

  get options(): Readonly<DelivererOptions> {
    return this.#options;
  }

  start(): void {
    queuedHere.on('queued', this.#onQueued);
    this.#loop.start();
  }

  /** A message was queued somewhere, or a slot freed here: look at once. */
  nudge(): void {
    this.#loop.nudge();
  }

  /** Starts what the free slots allow, then answers when the next claim can find something. */
  async #round(): Promise<number | undefined> {
    try {
      await this.#fill();
    } catch (err) {
      // The database being away is the loop's to wait out, with one log line (src/queue/loop.ts).
      if (databaseUnavailable(err)) throw err;
      this.deps.logger.error({ err }, 'webhook deliverer failed');
    }
    // With every slot taken, the next look comes when an attempt ends (it nudges).
    if (this.#running.size >= this.#options.concurrency) return undefined;
    const next = await this.#nextDue().catch(() => undefined);
    return msUntil(next, this.deps.clock.now());
  }

  /** Endpoints that have every slot of theirs in this process taken: not claimed for now. */
  #fullEndpoints(): string[] {
    return [...this.#perEndpoint].filter(([, n]) => n >= this.#options.perEndpoint).map(([id]) => id);
  }

  /**
   * When the next claim can find something: messages of disabled endpoints and of endpoints whose
   * slots are all taken here wait for no one, and one that another process holds is due when its lease
   * ends (otherwise this loop would spin on it).
   */
  #nextDue(): Promise<number | undefined> {
    return lifecycle.nextDue(this.deps.db.kysely, this.deps.clock.now(), this.#fullEndpoints());
  }

  /**
   * Makes every attempt that is due now and waits for them, claiming again as slots free (tests call it
   * with an injected clock).
   */
  tick(): Promise<void> {
    this.#ticking ??= this.#drain().finally(() => {
      this.#ticking = undefined;
    });
    return this.#ticking;
  }

  async #drain(): Promise<void> {
    for (;;) {
      await this.#fill();
      if (this.#running.size === 0 || this.#stopping) return;
      await Promise.race(this.#running);
    }
  }

  /** Claims what the free slots allow and starts each attempt on its own, without waiting for it. */
  #fill(): Promise<void> {
    this.#filling ??= this.#claimAndStart().finally(() => {
      this.#filling = undefined;
    });
    return this.#filling;
  }

  async #claimAndStart(): Promise<void> {
    while (!this.#stopping) {
      const room = this.#options.concurrency - this.#running.size;
      if (room <= 0) return;
      const claimed = await this.#claim(room);
      if (claimed.length === 0) return;
      const hooks = await this.deps.db.kysely
        .selectFrom('webhooks')
        .selectAll()
        .where('id', 'in', [...new Set(claimed.map((m) => m.webhook_id))])
        .execute();
      const byId = new Map(hooks.map((h) => [h.id, h]));
      for (const message of claimed) {
        const hook = byId.get(message.webhook_id);
        // An endpoint deleted since the claim took its messages with it.
        if (hook === undefined) continue;
        if ((this.#perEndpoint.get(hook.id) ?? 0) >= this.#options.perEndpoint) {
          await this.#handBack(message);
          continue;
        }
        this.#begin(hook, message);
      }
    }
  }

  /** Runs one attempt on its own; its slot frees (and the loop looks again) when it ends. */
  #begin(hook: WebhookRow, message: WebhookMessageRow): void {
    this.#perEndpoint.set(hook.id, (this.#perEndpoint.get(hook.id) ?? 0) + 1);
    const run = (async () => {
      try {
        if (message.crashes >= this.#options.maxCrashes) await this.#giveUp(hook, message);
        else await this.#deliver(hook, message);
      } catch (err) {
        await this.#crashed(hook, message, err).catch((again: unknown) =>
          this.deps.logger.error({ err: again, webhook: hook.id }, 'webhook crash not recorded'),
        );
      }
    })().finally(() => {
      const left = (this.#perEndpoint.get(hook.id) ?? 1) - 1;
      if (left <= 0) this.#perEndpoint.delete(hook.id);
      else this.#perEndpoint.set(hook.id, left);
      this.#running.delete(run);
      if (!this.#stopping) this.nudge();
    });
    this.#running.add(run);
  }

  /**
   * Claims up to `room` due messages, at most `perEndpoint` of one endpoint, none of an endpoint whose
   * slots are all taken here. A message whose lease ran out was being attempted by a process that died
   * (or stalled past the lease): that attempt counts as crashed.
   */
  #claim(room: number): Promise<WebhookMessageRow[]> {
    const { db, clock, owner } = this.deps;
    const { perEndpoint, timeoutMs } = this.#options;
    const now = clock.now();
    return lifecycle.claim(
      db.kysely,
      db.dialect,
      { owner, now, until: now + timeoutMs + LEASE_MARGIN_MS },
      { room, perEndpoint, full: this.#fullEndpoints() },
    );
  }

  /** A claimed message there is no slot for after all, or whose attempt a stop cut short. */
  #handBack(message: WebhookMessageRow): Promise<void> {
    return lifecycle.handBack(this.deps.db.kysely, this.deps.owner, message);
  }

  async #attempt(hook: WebhookRow, message: WebhookMessageRow): Promise<Result> {
    const { egress, keyring, clock } = this.deps;
    const secret = keyring.open(hook.secret_envelope, secretContext(hook.id));
    const headers = signedHeaders(secret, message.event_id, clock.now(), message.payload);
    const { timeoutMs } = this.#options;
    // The one bound on the whole attempt: connecting, sending, the headers and the answer's body. A
    // timer of our own, not AbortSignal.timeout() under AbortSignal.any(): nothing holds such a timeout
    // signal, and once it is garbage-collected it never fires, which leaves the attempt without a bound.
    const bound = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      bound.abort(new DOMException('the webhook attempt timed out', 'TimeoutError'));
    }, timeoutMs);
    const stop = () => bound.abort(this.#stopped.signal.reason);
    if (this.#stopped.signal.aborted) stop();
    else this.#stopped.signal.addEventListener('abort', stop, { once: true });
    try {
      const answer = await request(hook.url, {
        method: 'POST',
        dispatcher: egress.dispatcher,
        headers: { 'content-type': 'application/json', 'user-agent': 'ferry-webhooks', ...headers },
        body: message.payload,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: bound.signal,
      });
      await readAnswer(answer.body);
      return { statusCode: answer.statusCode };
    } catch (err) {
      return { error: timedOut ? 'timeout' : failureClass(err) };
    } finally {
      clearTimeout(timer);
      this.#stopped.signal.removeEventListener('abort', stop);
    }
  }

  async #deliver(hook: WebhookRow, message: WebhookMessageRow): Promise<void> {
    const { db, clock, logger, owner } = this.deps;
    const started = performance.now();
    const result = await this.#attempt(hook, message);
    const duration = Math.round(performance.now() - started);
    const now = clock.now();
    if (this.#stopped.signal.aborted && result.statusCode === undefined) {
      // Stopped mid-attempt: the message goes back to the queue at once, its attempt not counted, so
      // another process (or this one, restarted) sends it without waiting for the lease.
      await this.#handBack(message);
      return;
    }
    const delivered = result.statusCode !== undefined && result.statusCode >= 200 && result.statusCode < 300;
    const next = delivered
      ? undefined
      : nextAttemptAt(message.attempts, message.created_at, now, this.deps.random);
    const outcome = delivered ? 'delivered' : next === undefined ? 'failed' : 'retried';
    const disable = !delivered && hook.status === 'enabled' && now - (hook.failing_since ?? now) >= DAY_MS;
    const recorded = await lifecycle.settle(
      db.kysely,
      owner,
      message,
      {
        end: delivered
          ? { kind: 'delivered' }
          : next === undefined
            ? { kind: 'failed', attempted: true }
            : { kind: 'again', runAfter: next },
        attempt: { ...result, durationMs: duration },
        streak: delivered
          ? { kind: 'delivered' }
          : disable
            ? {
                kind: 'disable',
                reason: `every delivery attempt failed for 24 hours; the last: ${describe(result)}`,
              }
            : { kind: 'failing' },
      },
      now,
    );
    if (!recorded) return;
    this.#deliveries.inc({ outcome });
    const fields = {
      webhook: hook.id,
      event: message.event_id,
      type: message.type,
      attempt: message.attempts,
      result: describe(result),
      duration_ms: duration,
    };
    if (delivered) logger.debug(fields, 'webhook delivered');
    else logger.warn({ ...fields, final: next === undefined, disabled: disable }, 'webhook not delivered');
  }

  /**
   * An attempt threw (a bug or a database failure, not the endpoint's answer): counted as crashed and
   * logged as `crashed`; tried again on the schedule, or failed once it has crashed maxCrashes times.
   */
  async #crashed(hook: WebhookRow, message: WebhookMessageRow, err: unknown): Promise<void> {
    const { db, clock, logger, owner } = this.deps;
    const now = clock.now();
    const crashes = message.crashes + 1;
    const next =
      crashes >= this.#options.maxCrashes
        ? undefined
        : nextAttemptAt(message.attempts, message.created_at, now, this.deps.random);
    logger.error(
      { err, webhook: hook.id, event: message.event_id, attempt: message.attempts, crashes },
      'webhook attempt crashed',
    );
    await lifecycle.settle(
      db.kysely,
      owner,
      message,
      {
        end: next === undefined ? { kind: 'failed', attempted: true } : { kind: 'again', runAfter: next },
        attempt: { error: 'crashed', durationMs: 0 },
        crashes,
      },
      now,
    );
    if (next === undefined) this.#deliveries.inc({ outcome: 'failed' });
  }

  /** A message whose attempts crashed maxCrashes times: failed without another attempt. */
  async #giveUp(hook: WebhookRow, message: WebhookMessageRow): Promise<void> {
    const { db, clock, logger, owner } = this.deps;
    const ended = await lifecycle.settle(
      db.kysely,
      owner,
      message,
      { end: { kind: 'failed', attempted: false }, attempt: { error: 'crashed', durationMs: 0 } },
      clock.now(),
    );
    if (!ended) return;
    this.#deliveries.inc({ outcome: 'failed' });
    logger.error(
      { webhook: hook.id, event: message.event_id, crashes: message.crashes },
      'webhook event failed: its attempts crashed',
    );
  }

  async stop(): Promise<void> {
    const loopEnded = this.#loop.stop(); // from here on #stopping is true: nothing new is claimed
    queuedHere.off('queued', this.#onQueued);
    this.#stopped.abort();
    await loopEnded;
    await this.#ticking;
    await this.#filling;
    await Promise.all(this.#running);
  }
}

/**
 * Reads at most ANSWER_LIMIT bytes of an answer and closes it: what an endpoint sends back does not
 * matter beyond its status, and a long or slow body must not hold the attempt. Rejects when the
 * attempt's signal cuts the body short.
 */
async function readAnswer(body: Readable): Promise<void> {
  let read = 0;
  for await (const chunk of body) {
    read += (chunk as Buffer).length;
    if (read >= ANSWER_LIMIT) break; // leaving the loop destroys the body
  }
}

function describe(result: Result): string {
  return result.statusCode === undefined ? result.error : `HTTP ${result.statusCode}`;
}

/**
 * The class of a failure without an answer, as the deliveries log shows it: refused by the egress
 * guard (no connection was made), timeout, dns, or connection (refused, reset, TLS).
 */
function failureClass(err: unknown): string {
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (err instanceof FerryError || cause instanceof FerryError) return 'blocked';
  const code = (err as { code?: unknown } | null)?.code;
  const name = (err as { name?: unknown } | null)?.name;
  if (
    name === 'TimeoutError' ||
    name === 'AbortError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  )
    return 'timeout';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  return 'connection';
}
