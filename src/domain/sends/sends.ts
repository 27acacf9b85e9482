// Send (docs/api.md, "Send"): e-mail a link to one file, now or at a time. A send is checked and its
// file resolved at once (a pattern must match exactly one file), then stored as durable work that a
// worker delivers (dispatcher.ts). The hourly recipient limit is counted in the database, so it holds
// across processes.

import { hash } from '@node-rs/argon2';
import type { Kysely } from 'kysely';
import { ADDRESS_MAX, MESSAGE_MAX, PASSWORD_MAX } from '../../api/input.js';
import { type SendItem, type SendView, sendItem, sendView } from '../../api/send-views.js';
import { MAX_OTHER, MAX_TO, SENDER_NAME_MAX } from '../../api/sends.js';
import { type Clock, parseRfc3339 } from '../../clock.js';
import type { Db } from '../../db/database.js';
import { newestFirst, type Page } from '../../db/paging.js';
import type { Database, SendRow } from '../../db/schema.js';
import { workspaceRow } from '../../db/workspace-row.js';
import { type Recipients, sendRecipients } from '../../durable/records.js';
import { conflict, FerryError, invalid, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import * as lifecycle from '../../lifecycle/sends.js';
import { SENDS } from '../../queue/leased.js';
import { unleased } from '../../queue/leases.js';
import { type AuditContext, record } from '../audit/audit.js';
import { atLocation, type Caller } from '../caller.js';
import { capReached, countHeld } from '../caps.js';
import type { Shares } from '../shares/shares.js';
import { checkTimezone, resolveSchedule } from './schedule.js';

export { type SendItem, type SendView, sendItem, sendItemOf, sendView } from '../../api/send-views.js';

const HOUR_MS = 3_600_000;
/**
 * A send's link stops working this long after its mail goes out, unless `expires_at` says otherwise
 * (docs/api.md, "Send"): a link mailed to people should not work for ever.
 */
export const SEND_LINK_DEFAULT_MS = 7 * 24 * HOUR_MS;

export type Addresses = string | string[];

export interface SendInput {
  source: string;
  /** `source` is exact bytes, never a pattern (docs/api.md, "Exact names"). */
  literal?: boolean;
  to: Addresses;
  cc?: Addresses;
  bcc?: Addresses;
  replyTo?: Addresses;
  text?: string;
  password?: string;
  scheduledAt?: string;
  timezone?: string;
  expires_at?: string;
  sender_name?: string;
}

/** Control characters (CR and LF among them), format characters and line separators: never in a header. */
const NOT_IN_A_NAME = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

// A send's recipients as its row keeps them (src/durable/records.ts declares the shape).
export type { Recipients };

/**
 * An address as a mail server takes it: local@domain, no spaces, control characters, angle brackets or
 * commas. Control characters matter: nodemailer drops a NUL, so "a\u0000@example.com" would be mailed
 * to a@example.com.
 */
const ADDRESS =
  /^[^\s\p{Cc}@<>(),;:"[\]\\]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/u;

function addresses(value: Addresses | undefined, field: string, min: number, max: number): string[] {
  const list = value === undefined ? [] : Array.isArray(value) ? value : [value];
  if (list.length < min) throw invalid(`${field} needs at least ${min} address`);
  if (list.length > max) throw invalid(`${field} may hold at most ${max} addresses, got ${list.length}`);
  for (const address of list) {
    if (address.length > ADDRESS_MAX || !ADDRESS.test(address))
      throw invalid(`${field}: "${address}" is not an e-mail address`);
  }
  return list;
}

/** Why a send can no longer be canceled, for the 409. */
function notCancelable(row: SendRow): string {
  switch (row.status) {
    case 'sent':
      return `send ${row.id} cannot be canceled: its mail was already sent`;
    case 'failed':
      return `send ${row.id} cannot be canceled: it already failed`;
    case 'canceled':
      return `send ${row.id} was already canceled`;
    default:
      return `send ${row.id} cannot be canceled: its mail is being delivered now`;
  }
}

export class Sends {
  constructor(
    private readonly db: Db,
    private readonly shares: Shares,
    private readonly clock: Clock,
    private readonly settings: { smtpConfigured: boolean; recipientsPerHour: number; openShares?: number },
  ) {}

  async accept(
    caller: Caller,
    input: SendInput,
    /** The request's (POST /send); none when called directly. */
    audit?: AuditContext,
  ): Promise<SendView> {
    const { workspaceId } = caller;
    if (!this.settings.smtpConfigured) {
      throw new FerryError(
        'unavailable',
        'sending e-mail is not set up: set FERRY_SMTP_URL (smtp://host:port)',
      );
    }
    const now = this.clock.now();
    const recipients: Recipients = {
      to: addresses(input.to, 'to', 1, MAX_TO),
      cc: addresses(input.cc, 'cc', 0, MAX_OTHER),
      bcc: addresses(input.bcc, 'bcc', 0, MAX_OTHER),
      replyTo: addresses(input.replyTo, 'replyTo', 0, MAX_OTHER),
    };
    if (input.text !== undefined && input.text.length > MESSAGE_MAX) {
      throw invalid(`text may be at most ${MESSAGE_MAX} characters`);
    }
    if (input.password !== undefined && (input.password === '' || input.password.length > PASSWORD_MAX)) {
      throw invalid(`password must be 1 to ${PASSWORD_MAX} characters`);
    }
    if (
      input.sender_name !== undefined &&
      (input.sender_name.trim() === '' ||
        input.sender_name.length > SENDER_NAME_MAX ||
        NOT_IN_A_NAME.test(input.sender_name))
    ) {
      throw invalid(
        `sender_name must be 1 to ${SENDER_NAME_MAX} characters without line breaks or control characters`,
      );
    }
    checkTimezone(input.timezone);
    const scheduledAt =
      input.scheduledAt === undefined ? null : resolveSchedule(input.scheduledAt, now, input.timezone);
    const linkExpiresAt =
      input.expires_at === undefined
        ? (scheduledAt ?? now) + SEND_LINK_DEFAULT_MS
        : parseRfc3339(input.expires_at, 'expires_at');
    if (linkExpiresAt <= (scheduledAt ?? now)) {
      throw invalid('expires_at must be after the mail goes out');
    }
    const count = recipients.to.length + recipients.cc.length + recipients.bcc.length;
    await this.checkLimit(workspaceId, count, now);
    // The link goes out with the mail, made then and not refused: a workspace at its cap of open links
    // is refused here (docs/api.md, "Rate limits and caps").
    const openShares = this.settings.openShares ?? Number.POSITIVE_INFINITY;
    if ((await countHeld(this.db.kysely, 'shares', workspaceId, now)) >= openShares) {
      throw capReached('shares', openShares);
    }
    const { row: location, entry } = await this.shares.resolveFile(
      caller,
      input.source,
      'source',
      input.literal === true,
    );
    const passwordHash = input.password === undefined ? null : await hash(input.password);
    const row = await this.#recorded(audit, 'send.create', 202, now, (trx) =>
      lifecycle.accept(trx, {
        id: newId(),
        workspace_id: workspaceId,
        sender_name: input.sender_name?.trim() ?? null,
        location_id: location.id,
        path: entry.path,
        file_name: entry.name,
        file_size: entry.size,
        recipients: sendRecipients.encode(recipients),
        recipient_count: count,
        message: input.text ?? null,
        password_hash: passwordHash,
        link_expires_at: linkExpiresAt,
        scheduled_at: scheduledAt,
        sent_at: null,
        error: null,
        refused: null,
        attempts: 0,
        crashes: 0,
        run_after: scheduledAt ?? now,
        ...unleased(SENDS),
        created_at: now,
        updated_at: now,
      }),
    );
    return sendView(row);
  }

  /**
   * At most recipientsPerHour recipients per workspace in any rolling hour; the next send is 429 with
   * the seconds until enough of the hour's recipients have aged out.
   */
  private async checkLimit(workspaceId: string, count: number, now: number): Promise<void> {
    const limit = this.settings.recipientsPerHour;
    if (count > limit)
      throw invalid(`a send may have at most ${limit} recipients (FERRY_SEND_RECIPIENTS_PER_HOUR)`);
    const recent = await this.db.kysely
      .selectFrom('sends')
      .select(['created_at', 'recipient_count'])
      .where('workspace_id', '=', workspaceId)
      .where('created_at', '>', now - HOUR_MS)
      .orderBy('created_at', 'desc')
      .execute();
    let used = recent.reduce((sum, r) => sum + r.recipient_count, 0);
    if (used + count <= limit) return;
    // The oldest sends age out first: wait until enough of them have.
    let waitUntil = now;
    for (const r of [...recent].reverse()) {
      used -= r.recipient_count;
      waitUntil = r.created_at + HOUR_MS;
      if (used + count <= limit) break;
    }
    throw new FerryError('rate_limited', `at most ${limit} recipients per hour for this workspace`, {
      retryAfterSeconds: Math.max(1, Math.ceil((waitUntil - now) / 1000)),
    });
  }

  /** The workspace's sends, newest first (docs/api.md, "Send"). */
  async list(caller: Caller, limit: number, cursor?: string): Promise<Page<SendItem>> {
    const page = await newestFirst(
      this.db.kysely,
      'sends',
      caller.workspaceId,
      limit,
      cursor,
      atLocation(caller),
    );
    const labels = await this.labels(page.rows);
    return {
      items: page.rows.map((row) => sendItem(row, labels.get(row.location_id))),
      ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}),
    };
  }

  async get(caller: Caller, id: string): Promise<SendItem> {
    const row = await this.row(caller, id);
    return sendItem(row, (await this.labels([row])).get(row.location_id));
  }

  /**
   * Cancels a send whose mail has not started: scheduled, or queued and not claimed by a dispatcher.
   * The race with a dispatcher's claim is decided by this one conditional write (a claim sets
   * lease_owner in one UPDATE too): whichever commits first wins, and the other changes nothing. A
   * send's share link is made when its mail goes out, so a canceled send never has one.
   */
  async cancel(caller: Caller, id: string, audit: AuditContext): Promise<SendItem> {
    const current = await this.row(caller, id);
    const now = this.clock.now();
    const canceled = await this.#recorded(audit, 'send.cancel', 200, now, (trx) =>
      lifecycle.cancel(trx, caller.workspaceId, current.id, now),
    );
    if (!canceled) throw conflict(notCancelable(await this.row(caller, id)));
    return sendItem(canceled, (await this.labels([canceled])).get(canceled.location_id));
  }

  /**
   * A write to a send and the request's audit record on it (last, when the write was made and a
   * request gave an audit), in one transaction.
   */
  #recorded<R extends SendRow | undefined>(
    audit: AuditContext | undefined,
    action: 'send.create' | 'send.cancel',
    status: number,
    now: number,
    write: (trx: Kysely<Database>) => Promise<R>,
  ): Promise<R> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const row = await write(trx);
      if (row !== undefined && audit !== undefined)
        await record(trx, audit, { action, target: row.id, status }, now);
      return row;
    });
  }

  private async row(caller: Caller, id: string): Promise<SendRow> {
    const row = await workspaceRow(this.db.kysely, 'sends', caller.workspaceId, id, atLocation(caller));
    if (!row) throw notFound(`send ${id} not found`);
    return row;
  }

  /** The current labels of the locations of `rows`, in one query. */
  private async labels(rows: SendRow[]): Promise<Map<string, string>> {
    const ids = [...new Set(rows.map((r) => r.location_id))];
    if (ids.length === 0) return new Map();
    const found = await this.db.kysely
      .selectFrom('locations')
      .select(['id', 'label'])
      .where('id', 'in', ids)
      .execute();
    return new Map(found.map((l) => [l.id, l.label]));
  }
}
