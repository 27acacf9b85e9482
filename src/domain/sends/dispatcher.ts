// Delivers sends (docs/api.md, "Send"): worker processes claim due sends with a lease (one UPDATE …
// RETURNING, FOR UPDATE SKIP LOCKED on PostgreSQL, like transfer claims), make the send's share link,
// and mail it; every write of a send is a move of src/lifecycle/sends.ts (docs/engine.md, "Sends"). A 5xx answer
// ends the send `failed` with the server's words; 4xx answers and connection failures are tried again
// with backoff. The mail is handed to the server before the database records it: a crash in between
// delivers it again (same Message-ID), never not at all. Any other exception is a crash, and so is a
// process that dies or freezes holding a send's lease: each claim counts one in `crashes` until its
// outcome is written, and a send that crashed FERRY_WORK_MAX_CRASHES times is failed instead of
// claimed again (docs/api.md, "Background work that keeps failing").

import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/database.js';
import type { SendRow } from '../../db/schema.js';
import { databaseUnavailable } from '../../db/unavailable.js';
import { sendRecipients } from '../../durable/records.js';
import { isFerryError } from '../../errors.js';
import * as lifecycle from '../../lifecycle/sends.js';
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
import { msUntil, WakeLoop } from '../../queue/loop.js';
import type { Shares } from '../shares/shares.js';

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
      // The database being away is the loop's to wait out, with one log line (src/queue/loop.ts).
      if (databaseUnavailable(err)) throw err;
      this.deps.logger.error({ err }, 'send dispatcher failed');
    }
    const next = await this.nextDue().catch(() => undefined);
    return msUntil(next, this.deps.clock.now());
  }

  /** When a send is next due (lifecycle.nextDue). */
  nextDue(): Promise<number | undefined> {
    return lifecycle.nextDue(this.deps.db.kysely);
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
    const failed = await lifecycle.giveUp(db.kysely, clock.now(), this.#crashPolicy);
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
    await this.#settle(
      row,
      {
        kind: final ? 'failed' : 'again',
        error: final ? crashReason(row.crashes, message) : `the worker crashed on this send: ${message}`,
        refused: [],
        ...(final ? {} : { runAfter: now + backoffMs(row.crashes, {}, this.deps.random, SEND_BACKOFF) }),
        crashed: true,
      },
      now,
    );
    this.#sent.inc({ outcome: final ? 'failed' : 'retried' });
    this.deps.wakeStreams?.();
  }

  /** The attempt's outcome, written by the lifecycle against this process's lease. */
  #settle(row: SendRow, outcome: lifecycle.SendOutcome, now: number): Promise<boolean> {
    return lifecycle.settle(this.deps.db.kysely, this.deps.owner, row.id, outcome, now);
  }

  #claim(): Promise<SendRow[]> {
    const { db, clock, owner } = this.deps;
    const now = clock.now();
    return lifecycle.claim(db.kysely, db.dialect, { owner, now, until: now + LEASE_MS }, BATCH);
  }

  async #deliver(row: SendRow): Promise<void> {
    const { shares, clock, logger } = this.deps;
    const recipients = sendRecipients.decode(row.recipients, row.id);
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
      await this.#settle(row, { kind: 'sent', refused: result.refused }, clock.now());
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
      await this.#settle(
        row,
        {
          kind: final ? 'failed' : 'again',
          // The SMTP server's words: a NUL in them could not be stored on PostgreSQL.
          error: failure.message.replaceAll('\u0000', '\ufffd'),
          refused: failure.refused,
          ...(final ? {} : { runAfter: now + backoffMs(row.attempts, {}, this.deps.random, SEND_BACKOFF) }),
          crashed: false,
        },
        now,
      );
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
