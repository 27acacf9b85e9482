// Delivers webhook messages (docs/webhooks.md, "Delivery"): worker processes claim due messages of
// enabled endpoints with a lease (one UPDATE … RETURNING, FOR UPDATE SKIP LOCKED on PostgreSQL, like
// transfer claims), so two processes never make the same attempt; POST the body with the Standard
// Webhooks headers through the egress guard; and record the attempt, the message's next try or its
// end, and the endpoint's failure streak in one transaction that checks the lease. Any 2xx delivers;
// other answers, timeouts and connection failures are tried again on the schedule (schedule.ts) for a
// day; an endpoint that failed for a day is disabled. A crash between the answer and the record
// delivers the message again, with the same webhook-id, which receivers use to drop duplicates; a
// process that stops cuts its attempts short and hands their messages back.
import { sql } from 'kysely';
import { Counter, type Registry } from 'prom-client';
import { request } from 'undici';
import type { Keyring } from '../../crypto/envelope.js';
import type { Db } from '../../db/database.js';
import type { WebhookMessageRow, WebhookRow } from '../../db/schema.js';
import { FerryError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Egress } from '../../net/egress.js';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import { queuedHere } from './outbox.js';
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
  /** One attempt's limit, from connecting to the end of the answer. */
  timeoutMs: number;
}

export const DELIVERER_DEFAULTS: DelivererOptions = { pollMs: 30_000, timeoutMs: 15_000 };
const BATCH = 16;

/** What became of one attempt. */
type Result = { statusCode: number; error?: undefined } | { statusCode?: undefined; error: string };

export class WebhookDeliverer {
  readonly #deliveries: Counter<'outcome'>;
  readonly #options: DelivererOptions;
  #stopping = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #nudged = false;
  #ticking: Promise<void> | undefined;
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
  }

  start(): void {
    queuedHere.on('queued', this.#onQueued);
    this.#loop ??= this.#run();
  }

  /** A message was queued somewhere: look at once. */
  nudge(): void {
    this.#nudged = true;
    this.#wake?.();
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      this.#nudged = false;
      try {
        await this.tick();
      } catch (err) {
        this.deps.logger.error({ err }, 'webhook deliverer failed');
      }
      const next = await this.#nextDue().catch(() => undefined);
      const wait = Math.min(
        this.#options.pollMs,
        next === undefined ? Number.POSITIVE_INFINITY : Math.max(0, next - this.deps.clock.now()),
      );
      if (this.#stopping) break;
      // A message queued since this round began may not be in what it read: look again at once.
      if (this.#nudged) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
  }

  /**
   * When the next claim can find something: messages of disabled endpoints wait for no one, and one
   * that another process holds is due when its lease ends (otherwise this loop would spin on it).
   */
  async #nextDue(): Promise<number | undefined> {
    const now = this.deps.clock.now();
    const result = await sql<{ next: number | string | null }>`
      select min(case when m.lease_expires_at >= ${now} and m.lease_expires_at > m.run_after
                      then m.lease_expires_at else m.run_after end) as next
      from webhook_messages m join webhooks w on w.id = m.webhook_id
      where m.status = 'pending' and w.status = 'enabled'`.execute(this.deps.db.kysely);
    const next = result.rows[0]?.next;
    return next === null || next === undefined ? undefined : Number(next);
  }

  /** Makes every attempt that is due now (tests call it with an injected clock). */
  tick(): Promise<void> {
    this.#ticking ??= this.#deliverDue().finally(() => {
      this.#ticking = undefined;
    });
    return this.#ticking;
  }

  async #deliverDue(): Promise<void> {
    while (!this.#stopping) {
      const claimed = await this.#claim();
      if (claimed.length === 0) return;
      const hooks = await this.deps.db.kysely
        .selectFrom('webhooks')
        .selectAll()
        .where('id', 'in', [...new Set(claimed.map((m) => m.webhook_id))])
        .execute();
      const byId = new Map(hooks.map((h) => [h.id, h]));
      await Promise.all(
        claimed.map((message) => {
          const hook = byId.get(message.webhook_id);
          return hook ? this.#deliver(hook, message) : Promise.resolve();
        }),
      );
    }
  }

  async #claim(): Promise<WebhookMessageRow[]> {
    const { db, clock, owner } = this.deps;
    const now = clock.now();
    const lock = db.dialect === 'postgres' ? sql`for update of m skip locked` : sql``;
    const result = await sql<WebhookMessageRow>`
      update webhook_messages
      set lease_owner = ${owner}, lease_expires_at = ${now + this.#options.timeoutMs + 60_000},
          attempts = attempts + 1, updated_at = ${now}
      where (webhook_id, event_id) in (
        select m.webhook_id, m.event_id from webhook_messages m
        join webhooks w on w.id = m.webhook_id
        where m.status = 'pending' and m.run_after <= ${now} and w.status = 'enabled'
          and (m.lease_owner is null or m.lease_expires_at < ${now})
        order by m.run_after
        limit ${BATCH}
        ${lock}
      )
      returning *`.execute(db.kysely);
    return result.rows;
  }

  async #attempt(hook: WebhookRow, message: WebhookMessageRow): Promise<Result> {
    const { egress, keyring, clock } = this.deps;
    const secret = keyring.open(hook.secret_envelope, secretContext(hook.id));
    const headers = signedHeaders(secret, message.event_id, clock.now(), message.payload);
    try {
      const answer = await request(hook.url, {
        method: 'POST',
        dispatcher: egress.dispatcher,
        headers: { 'content-type': 'application/json', 'user-agent': 'ferry-webhooks', ...headers },
        body: message.payload,
        headersTimeout: this.#options.timeoutMs,
        bodyTimeout: this.#options.timeoutMs,
        signal: AbortSignal.any([AbortSignal.timeout(this.#options.timeoutMs), this.#stopped.signal]),
      });
      await answer.body.dump().catch(() => undefined);
      return { statusCode: answer.statusCode };
    } catch (err) {
      return { error: failureClass(err) };
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
      await db.kysely
        .updateTable('webhook_messages')
        .set((eb) => ({ lease_owner: null, lease_expires_at: null, attempts: eb('attempts', '-', 1) }))
        .where('webhook_id', '=', message.webhook_id)
        .where('event_id', '=', message.event_id)
        .where('lease_owner', '=', owner)
        .execute();
      return;
    }
    const delivered = result.statusCode !== undefined && result.statusCode >= 200 && result.statusCode < 300;
    const next = delivered
      ? undefined
      : nextAttemptAt(message.attempts, message.created_at, now, this.deps.random);
    const outcome = delivered ? 'delivered' : next === undefined ? 'failed' : 'retried';
    const disable = !delivered && hook.status === 'enabled' && now - (hook.failing_since ?? now) >= DAY_MS;
    const recorded = await db.kysely.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('webhook_messages')
        .set({
          status: delivered ? 'delivered' : next === undefined ? 'failed' : 'pending',
          ...(next === undefined ? {} : { run_after: next }),
          lease_owner: null,
          lease_expires_at: null,
          updated_at: now,
        })
        .where('webhook_id', '=', message.webhook_id)
        .where('event_id', '=', message.event_id)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      // Another process took the message over (our lease ran out): its record stands.
      if (updated.numUpdatedRows === 0n) return false;
      await trx
        .insertInto('webhook_attempts')
        .values({
          id: newId(),
          webhook_id: message.webhook_id,
          event_id: message.event_id,
          type: message.type,
          attempt: message.attempts,
          status_code: result.statusCode ?? null,
          error: result.error ?? null,
          duration_ms: duration,
          created_at: now,
        })
        .execute();
      if (delivered) {
        await trx
          .updateTable('webhooks')
          .set({ failing_since: null })
          .where('id', '=', hook.id)
          .where('failing_since', 'is not', null)
          .execute();
      } else if (disable) {
        await trx
          .updateTable('webhooks')
          .set({
            status: 'disabled',
            disabled_at: now,
            disabled_reason: `every delivery attempt failed for 24 hours; the last: ${describe(result)}`,
            updated_at: now,
          })
          .where('id', '=', hook.id)
          .where('status', '=', 'enabled')
          .execute();
      } else {
        await trx
          .updateTable('webhooks')
          .set({ failing_since: now })
          .where('id', '=', hook.id)
          .where('failing_since', 'is', null)
          .execute();
      }
      return true;
    });
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

  async stop(): Promise<void> {
    this.#stopping = true;
    queuedHere.off('queued', this.#onQueued);
    this.#stopped.abort();
    this.nudge();
    await this.#loop;
    await this.#ticking;
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
