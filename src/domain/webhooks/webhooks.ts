// Webhook endpoints of a workspace (docs/webhooks.md, "Managing webhooks"): created with a signing
// secret that is answered once and kept sealed like a location secret (src/crypto/envelope.ts, bound
// to the webhook's id), listed and read without it, changed, re-enabled and deleted; and the log of
// delivery attempts. A URL must be http(s) and resolve only to addresses the egress guard allows.

import type { Kysely, Transaction } from 'kysely';
import { isWebhookEvent, WEBHOOK_EVENTS, type WebhookEvent } from '../../api/events.js';
import { type Clock, toRfc3339 } from '../../clock.js';
import type { Keyring } from '../../crypto/envelope.js';
import { afterCursor, encodeCursor, pageOf } from '../../db/paging.js';
import type { Database, WebhookAttemptRow, WebhookRow } from '../../db/schema.js';
import { workspaceRow } from '../../db/workspace-row.js';
import { FerryError, invalid, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import * as lifecycle from '../../lifecycle/webhooks.js';
import type { Egress } from '../../net/egress.js';
import { checkPullHost } from '../../objects/fetch-url.js';
import type { Secret } from '../../secret.js';
import type { WebhookStatus } from '../../states.js';
import { type AuditContext, type AuditEntry, record } from '../audit/audit.js';
import { checkCap } from '../caps.js';
import { newSigningSecret } from './signing.js';

export interface WebhookView {
  id: string;
  url: string;
  events: WebhookEvent[];
  status: WebhookStatus;
  disabled_reason?: string;
  disabled_at?: string;
  failing_since?: string;
  created_at: string;
  updated_at: string;
}

export interface DeliveryView {
  id: string;
  event_id: string;
  type: string;
  attempt: number;
  status_code?: number;
  error?: string;
  duration_ms: number;
  at: string;
}

export interface WebhookChange {
  url?: string;
  events?: string[];
  status?: WebhookStatus;
}

/** The context a webhook's secret is sealed under: it opens on no other row. */
export const secretContext = (id: string) => `webhook:${id}`;

export function encodeEvents(events: readonly WebhookEvent[]): string {
  return `,${events.join(',')},`;
}

function decodeEvents(text: string): WebhookEvent[] {
  return text.split(',').filter(isWebhookEvent);
}

function view(row: WebhookRow): WebhookView {
  return {
    id: row.id,
    url: row.url,
    events: decodeEvents(row.events),
    status: row.status,
    ...(row.disabled_reason === null ? {} : { disabled_reason: row.disabled_reason }),
    ...(row.disabled_at === null ? {} : { disabled_at: toRfc3339(row.disabled_at) }),
    ...(row.failing_since === null ? {} : { failing_since: toRfc3339(row.failing_since) }),
    created_at: toRfc3339(row.created_at),
    updated_at: toRfc3339(row.updated_at),
  };
}

function deliveryView(row: WebhookAttemptRow): DeliveryView {
  return {
    id: row.id,
    event_id: row.event_id,
    type: row.type,
    attempt: row.attempt,
    ...(row.status_code === null ? {} : { status_code: row.status_code }),
    ...(row.error === null ? {} : { error: row.error }),
    duration_ms: row.duration_ms,
    at: toRfc3339(row.created_at),
  };
}

function checkEvents(events: readonly string[]): WebhookEvent[] {
  if (events.length === 0) throw invalid('events must name at least one event');
  const unknown = events.filter((e) => !isWebhookEvent(e));
  if (unknown.length > 0) {
    throw invalid(`unknown event ${JSON.stringify(unknown[0])}; events are ${WEBHOOK_EVENTS.join(', ')}`);
  }
  return [...new Set(events as WebhookEvent[])];
}

export class Webhooks {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly keyring: Keyring,
    private readonly egress: Egress,
    private readonly clock: Clock,
    /** Endpoints per workspace (docs/api.md, "Rate limits and caps"). */
    private readonly cap: number,
  ) {}

  /** The URL checks of creation and change; the host's addresses are checked again at every delivery. */
  async #checkUrl(url: string): Promise<string> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalid('url is not a URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw invalid('url must be http or https');
    }
    if (parsed.username !== '' || parsed.password !== '') {
      throw invalid('url must not carry a user name or password');
    }
    try {
      await checkPullHost(parsed, this.egress);
    } catch (err) {
      if (err instanceof FerryError && err.kind === 'invalid') throw invalid(`url: ${err.message}`);
      throw err;
    }
    return parsed.href;
  }

  async create(
    workspaceId: string,
    input: { url: string; events: string[] },
    audit: AuditContext,
  ): Promise<WebhookView & { secret: string }> {
    const url = await this.#checkUrl(input.url);
    const events = checkEvents(input.events);
    const id = newId();
    const secret: Secret = newSigningSecret();
    const now = this.clock.now();
    const row = await this.#recorded(
      audit,
      { action: 'webhook.create', target: id, status: 201 },
      now,
      async (trx) => {
        await checkCap(trx, 'webhooks', workspaceId, this.cap, now);
        return lifecycle.create(
          trx,
          {
            id,
            workspace_id: workspaceId,
            url,
            events: encodeEvents(events),
            secret_envelope: this.keyring.seal(secret.reveal(), secretContext(id)),
          },
          now,
        );
      },
    );
    return { ...view(row), secret: secret.reveal() };
  }

  /** A change of an endpoint and the request's audit record (last), in one transaction. */
  #recorded<R>(
    audit: AuditContext,
    entry: AuditEntry,
    now: number,
    change: (trx: Transaction<Database>) => Promise<R>,
  ): Promise<R> {
    return this.db.transaction().execute(async (trx) => {
      const result = await change(trx);
      await record(trx, audit, entry, now);
      return result;
    });
  }

  async #find(workspaceId: string, id: string): Promise<WebhookRow> {
    const row = await workspaceRow(this.db, 'webhooks', workspaceId, id);
    if (!row) throw notFound(`webhook ${id} was not found`);
    return row;
  }

  async get(workspaceId: string, id: string): Promise<WebhookView> {
    return view(await this.#find(workspaceId, id));
  }

  async list(workspaceId: string): Promise<WebhookView[]> {
    const rows = await this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'asc')
      .execute();
    return rows.map(view);
  }

  /**
   * Changes the URL or events, or the status: enabling a disabled endpoint clears its reason and its
   * failure streak, so it gets a new day before it can be disabled again.
   */
  async update(
    workspaceId: string,
    id: string,
    change: WebhookChange,
    audit: AuditContext,
  ): Promise<WebhookView> {
    const row = await this.#find(workspaceId, id);
    const now = this.clock.now();
    const url = change.url === undefined ? undefined : await this.#checkUrl(change.url);
    const events = change.events === undefined ? undefined : checkEvents(change.events);
    const entry: AuditEntry = { action: 'webhook.update', target: row.id, status: 200 };
    const updated = await this.#recorded(audit, entry, now, async (trx) => {
      const changed = await lifecycle.change(
        trx,
        row,
        {
          ...(url === undefined ? {} : { url }),
          ...(events === undefined ? {} : { events: encodeEvents(events) }),
          ...(change.status === undefined ? {} : { status: change.status }),
        },
        now,
      );
      // Gone meanwhile: nothing changed, nothing recorded.
      if (!changed) throw notFound(`webhook ${id} was not found`);
      return changed;
    });
    return view(updated);
  }

  /** Deletes the endpoint, its queued messages and its log. */
  async delete(workspaceId: string, id: string, audit: AuditContext): Promise<void> {
    const row = await this.#find(workspaceId, id);
    const entry: AuditEntry = { action: 'webhook.delete', target: row.id, status: 204 };
    await this.#recorded(audit, entry, this.clock.now(), (trx) => lifecycle.remove(trx, row.id));
  }

  /** The endpoint's delivery attempts, newest first, `limit` at a time. */
  async deliveries(
    workspaceId: string,
    id: string,
    limit: number,
    cursor: string | undefined,
  ): Promise<{ deliveries: DeliveryView[]; next_cursor?: string }> {
    const row = await this.#find(workspaceId, id);
    const rows = await this.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('webhook_id', '=', row.id)
      .where(afterCursor(cursor))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'asc')
      .limit(limit + 1)
      .execute();
    const page = pageOf(rows, limit, (last) => encodeCursor(last.created_at, last.id));
    return {
      deliveries: page.rows.map(deliveryView),
      ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
    };
  }
}
