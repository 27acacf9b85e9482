// Delivers sends (docs/api.md, "Send"): worker processes claim due sends with a lease (one UPDATE …
// RETURNING, FOR UPDATE SKIP LOCKED on PostgreSQL, like transfer claims), make the send's share link,
// and mail it. A 5xx answer ends the send `failed` with the server's words; 4xx answers and connection
// failures are tried again with backoff. The mail is handed to the server before the database records
// it: a crash in between delivers it again (same Message-ID), never not at all. Any other exception is
// a crash, and so is a process that dies or freezes holding a send's lease: each claim counts one in
// `crashes` until its outcome is written, and a send that crashed FERRY_WORK_MAX_CRASHES times is
// failed instead of claimed again (docs/api.md, "Background work that keeps failing").
import { sql, type Updateable } from 'kysely';
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/database.js';
import type { SendRow, SendsTable } from '../../db/schema.js';
import { isFerryError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { MailError, type Mailer } from '../../mail/mailer.js';
import {
  type BackoffPolicy,
  backoffMs,
  type CrashPolicy,
  crashMessage,
  crashReason,
  DEFAULT_CRASH_POLICY,
} from '../../queue/backoff.js';
import { claimRows, skipLocked } from '../../queue/claim.js';
import { msUntil, WakeLoop } from '../../queue/loop.js';
import { crashedError } from '../../queue/moves.js';
import { emit } from '../../queue/outbox.js';
import type { Shares } from '../shares/shares.js';
import { type Recipients, sendItemOf } from './sends.js';

/** Attempts before a send that keeps failing for a passing reason is failed. */
export const SEND_MAX_ATTEMPTS = 8;
/** 30 s doubling to an hour: about two hours of tries in all. */
export const SEND_BACKOFF: BackoffPolicy = { baseMs: 30_000, capMs: 3_600_000 };
/** Longer than the mailer's connection, greeting and socket timeouts together. */
const LEASE_MS = 5 * 60_000;
const BATCH = 8;

export interface DispatcherDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  shares: Shares;
  mailer: Mailer;
  owner: string;
  from: string;
  registry: Registry;
  random?: () => number;
  /** Called after a send's state was written: wakes the event streams (docs/api.md, "Live progress"). */
  wakeStreams?: () => void;
  /** When a send that keeps crashing is failed (FERRY_WORK_MAX_CRASHES); DEFAULT_CRASH_POLICY without it. */
  crashes?: CrashPolicy;
}

export class SendDispatcher {
  readonly #sent: Counter<'outcome'>;
  readonly #messageHost: string;
  readonly #loop: WakeLoop;
  #ticking: Promise<void> | undefined;

  constructor(
    private readonly deps: DispatcherDeps,
    options: { pollMs: number } = { pollMs: 30_000 },
  ) {
    this.#sent = new Counter({
      name: 'ferry_sends_total',
      help: 'Send delivery attempts by outcome (sent, failed, retried)',
      labelNames: ['outcome'] as const,
      registers: [deps.registry],
    });
    this.#messageHost = deps.from.slice(deps.from.lastIndexOf('@') + 1).replace(/>$/, '');
    this.#loop = new WakeLoop({
      name: 'send dispatcher',
      pollMs: options.pollMs,
      logger: deps.logger,
      round: () => this.#round(),
    });
  }

  start(): void {
    this.#loop.start();
  }

  /** A send was added or changed somewhere: deliver what is due and plan the next wake-up again. */
  nudge(): void {
    this.#loop.nudge();
  }

  /** Delivers what is due, then answers when the next send is (the loop sleeps until then). */
  async #round(): Promise<number | undefined> {
    try {
      await this.tick();
    } catch (err) {
      this.deps.logger.error({ err }, 'send dispatcher failed');
    }
    const next = await this.nextDue().catch(() => undefined);
    return msUntil(next, this.deps.clock.now());
  }

  /**
   * When a send is next due: its run_after, or, while a process holds its lease, when that lease
   * ends (the holder delivers it first; looking earlier would find nothing to claim, again and again).
   */
  async nextDue(): Promise<number | undefined> {
    const result = await sql<{ next_due: number | string | null }>`
      select min(case when lease_owner is not null and lease_expires_at > run_after
                      then lease_expires_at else run_after end) as next_due
      from sends where status in ('scheduled', 'queued')`.execute(this.deps.db.kysely);
    const next = result.rows[0]?.next_due;
    return next === null || next === undefined ? undefined : Number(next);
  }

  /** Delivers every send that is due now (tests call it with an injected clock). */
  tick(): Promise<void> {
    this.#ticking ??= this.#deliverDue().finally(() => {
      this.#ticking = undefined;
    });
    return this.#ticking;
  }

  async #deliverDue(): Promise<void> {
    await this.#giveUp();
    for (;;) {
      const claimed = await this.#claim();
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((row) => this.#attempt(row)));
    }
  }

  get #crashPolicy(): CrashPolicy {
    return this.deps.crashes ?? DEFAULT_CRASH_POLICY;
  }

  /**
   * Sends whose lease ran out on their last crash allowed (the process died or froze while delivering
   * them, or crashed and could not even record it) are failed, not claimed again.
   */
  async #giveUp(): Promise<void> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const failed = await db.kysely.transaction().execute(async (trx) => {
      const rows = await trx
        .updateTable('sends')
        .set({
          status: 'failed',
          error: crashedError(),
          lease_owner: null,
          lease_expires_at: null,
          updated_at: now,
        })
        .where('status', 'in', ['scheduled', 'queued'])
        .where('lease_owner', 'is not', null)
        .where('lease_expires_at', '<', now)
        .where('crashes', '>=', this.#crashPolicy.max)
        .returningAll()
        .execute();
      for (const row of rows) {
        await emit(trx, {
          workspaceId: row.workspace_id,
          type: 'send.failed',
          data: await sendItemOf(trx, row),
          at: now,
        });
      }
      return rows;
    });
    if (failed.length === 0) return;
    this.#sent.inc({ outcome: 'failed' }, failed.length);
    this.deps.wakeStreams?.();
    this.deps.logger.warn({ sends: failed.map((r) => r.id) }, 'failed sends that kept crashing');
  }

  /** One send's attempt; a crash that even its record did not survive is recorded as a crash. */
  async #attempt(row: SendRow): Promise<void> {
    try {
      await this.#deliver(row);
    } catch (err) {
      this.deps.logger.error({ err, send: row.id }, 'send crashed');
      // If this is refused too, the lease runs out and the crash its claim counted stays counted.
      await this.#crashed(row, crashMessage(err)).catch((again: unknown) =>
        this.deps.logger.error({ err: again, send: row.id }, 'could not record a crash of a send'),
      );
    }
  }

  /** A crash: tried again after a backoff with the crash kept, or failed on the last crash allowed. */
  async #crashed(row: SendRow, message: string): Promise<void> {
    const now = this.deps.clock.now();
    const final = row.crashes >= this.#crashPolicy.max;
    await this.#record(row, now, {
      status: final ? 'failed' : 'queued',
      error: final ? crashReason(row.crashes, message) : `the worker crashed on this send: ${message}`,
      refused: null,
      run_after: final ? row.run_after : now + backoffMs(row.crashes, {}, this.deps.random, SEND_BACKOFF),
      lease_owner: null,
      lease_expires_at: null,
      updated_at: now,
    });
    this.#sent.inc({ outcome: final ? 'failed' : 'retried' });
    this.deps.wakeStreams?.();
  }

  async #claim(): Promise<SendRow[]> {
    const { db, clock, owner } = this.deps;
    const now = clock.now();
    return claimRows<SendRow>(db.kysely, {
      table: 'sends',
      keys: ['id'],
      pick: sql`
        select id from sends
        where status in ('scheduled', 'queued') and run_after <= ${now}
          and (lease_owner is null or lease_expires_at < ${now})
        order by run_after
        limit ${BATCH}
        ${skipLocked(db.dialect)}`,
      set: sql`status = 'queued', lease_owner = ${owner}, lease_expires_at = ${now + LEASE_MS},
          attempts = attempts + 1, crashes = crashes + 1, updated_at = ${now}`,
    });
  }

  /** Writes the attempt's outcome; a send that ended is reported to webhooks (docs/webhooks.md) with it. */
  async #record(row: SendRow, now: number, set: Updateable<SendsTable>): Promise<void> {
    await this.deps.db.kysely.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('sends')
        .set(set)
        .where('id', '=', row.id)
        .where('lease_owner', '=', this.deps.owner)
        .returningAll()
        .executeTakeFirst();
      if (updated && (updated.status === 'sent' || updated.status === 'failed')) {
        await emit(trx, {
          workspaceId: updated.workspace_id,
          type: `send.${updated.status}`,
          data: await sendItemOf(trx, updated),
          at: now,
        });
      }
    });
  }

  async #deliver(row: SendRow): Promise<void> {
    const { shares, clock, logger } = this.deps;
    const recipients = JSON.parse(row.recipients) as Recipients;
    let shareId: string | undefined;
    try {
      const location = await this.deps.db.kysely
        .selectFrom('locations')
        .selectAll()
        .where('id', '=', row.location_id)
        .executeTakeFirst();
      if (!location) throw new MailError('the location of the file was deleted', true);
      const workspace = await this.deps.db.kysely
        .selectFrom('workspaces')
        .select('name')
        .where('id', '=', row.workspace_id)
        .executeTakeFirst();
      const share = await shares.insert(row.workspace_id, location, row.path, {
        expiresAt: row.link_expires_at,
        ...(row.password_hash === null ? {} : { passwordHash: row.password_hash }),
      });
      shareId = share.id;
      const result = await this.deps.mailer.send({
        messageId: `<${row.id}@${this.#messageHost}>`,
        from: this.deps.from,
        senderName: row.sender_name ?? workspace?.name ?? 'ferry',
        ...recipients,
        fileName: row.file_name,
        fileSize: row.file_size,
        url: share.url,
        message: row.message,
        expiresAt: row.link_expires_at,
        hasPassword: row.password_hash !== null,
      });
      const now = clock.now();
      await this.#record(row, now, {
        status: 'sent',
        sent_at: now,
        error: null,
        refused: result.refused.length > 0 ? JSON.stringify(result.refused) : null,
        lease_owner: null,
        lease_expires_at: null,
        updated_at: now,
      });
      this.#sent.inc({ outcome: 'sent' });
      this.deps.wakeStreams?.();
      logger.info(
        { send: row.id, recipients: row.recipient_count, refused: result.refused.length },
        'send delivered',
      );
    } catch (err) {
      if (shareId !== undefined) await shares.revokeUnsent(shareId);
      // Anything but the mail's own failure or a classified one (a store's) is a crash (#attempt
      // records it); a classified failure is tried again as a passing one, as the mail's are.
      if (!(err instanceof MailError || isFerryError(err))) throw err;
      const failure = err instanceof MailError ? err : new MailError(err.message, false);
      const now = clock.now();
      const final = failure.permanent || row.attempts >= SEND_MAX_ATTEMPTS;
      await this.#record(row, now, {
        status: final ? 'failed' : 'queued',
        // The SMTP server's words: a NUL in them could not be stored on PostgreSQL.
        error: failure.message.replaceAll('\u0000', '\ufffd'),
        // The attempt ended without crashing: its claim's crash is taken back.
        crashes: row.crashes - 1,
        refused: failure.refused.length > 0 ? JSON.stringify(failure.refused) : null,
        run_after: final ? row.run_after : now + backoffMs(row.attempts, {}, this.deps.random, SEND_BACKOFF),
        lease_owner: null,
        lease_expires_at: null,
        updated_at: now,
      });
      this.#sent.inc({ outcome: final ? 'failed' : 'retried' });
      this.deps.wakeStreams?.();
      logger.warn(
        { send: row.id, attempts: row.attempts, final, error: failure.message },
        'send not delivered',
      );
    }
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
    await this.#ticking;
  }
}
