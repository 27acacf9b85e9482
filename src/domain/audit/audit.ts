// The audit log (docs/api.md, "Audit log"): what was done, by which key, from where. Each change records
// itself with record() inside the transaction that makes the change, as its last statement, so that a
// change never commits unrecorded and a record never outlives a change that rolled back. What reaches a
// row is chosen here: an action name from ACTIONS (src/api/audit.ts, since ?action= is checked against
// them), a target (an id, or a location label and path), the status answered, the key, the client's
// address and user agent (cut to USER_AGENT_MAX). Never a secret, a password or a body.

import type { AuditAction } from '../../api/audit.js';
import { newOrderedId } from '../../ids.js';
import type { Queryable } from '../../queue/moves.js';

export { ACTIONS, type AuditAction } from '../../api/audit.js';

/** The longest user agent kept; the rest is cut. */
export const USER_AGENT_MAX = 256;

/** Who asked, and from where: taken from the request by the HTTP layer (src/http/audit.ts). */
export interface AuditContext {
  /** Null only for a refused authentication. */
  workspaceId: string | null;
  keyId: string | null;
  ip: string;
  userAgent: string | undefined;
}

export interface AuditEntry {
  action: AuditAction;
  /** What it acted on: an id, or `<location label>/<path>`. */
  target?: string;
  /** The HTTP status answered (or, for a share download, served). */
  status: number;
}

/** Records one action; call it inside the transaction of the change it records, last. */
export async function record(
  q: Queryable,
  context: AuditContext,
  entry: AuditEntry,
  at: number,
): Promise<void> {
  await q
    .insertInto('audit_events')
    .values({
      // Ordered: events of one millisecond list newest first (GET /v1/audit sorts by at, then id).
      id: newOrderedId(at),
      workspace_id: context.workspaceId,
      at,
      action: entry.action,
      target: entry.target ?? null,
      status: entry.status,
      key_id: context.keyId,
      ip: context.ip,
      user_agent: context.userAgent === undefined ? null : context.userAgent.slice(0, USER_AGENT_MAX),
    })
    .execute();
}
