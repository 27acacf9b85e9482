import type { AuditEvent } from '../../api/audit.js';
import { ACTIONS, type AuditAction } from '../../api/audit.js';
import { parseRfc3339, toRfc3339 } from '../../clock.js';
import type { Db } from '../../db/database.js';
import { afterCursor, encodeCursor, type Page, pageOf } from '../../db/paging.js';
import { invalid } from '../../errors.js';
import { isUuid } from '../../ids.js';

export interface AuditFilter {
  action?: string;
  keyId?: string;
  /** RFC 3339: events at or after it. */
  after?: string;
  /** RFC 3339: events before it. */
  before?: string;
}

export function isAction(value: string): value is AuditAction {
  return (ACTIONS as readonly string[]).includes(value);
}

export async function listAudit(
  db: Db,
  workspaceId: string,
  filter: AuditFilter,
  limit: number,
  cursor: string | undefined,
): Promise<Page<AuditEvent>> {
  if (filter.action !== undefined && !isAction(filter.action)) {
    throw invalid(`action must be one of ${ACTIONS.join(', ')}`);
  }
  if (filter.keyId !== undefined && !isUuid(filter.keyId)) throw invalid('key_id must be an API key id');
  const after = filter.after === undefined ? undefined : parseRfc3339(filter.after, 'after');
  const before = filter.before === undefined ? undefined : parseRfc3339(filter.before, 'before');
  let query = db.kysely
    .selectFrom('audit_events as e')
    .leftJoin('api_keys as k', 'k.id', 'e.key_id')
    .select([
      'e.id',
      'e.at',
      'e.action',
      'e.target',
      'e.status',
      'e.key_id',
      'k.name as key_name',
      'e.ip',
      'e.user_agent',
    ])
    .where('e.workspace_id', '=', workspaceId);
  if (filter.action !== undefined) query = query.where('e.action', '=', filter.action);
  if (filter.keyId !== undefined) query = query.where('e.key_id', '=', filter.keyId);
  if (after !== undefined) query = query.where('e.at', '>=', after);
  if (before !== undefined) query = query.where('e.at', '<', before);
  const rows = await query
    .where(afterCursor(cursor, { time: 'e.at', id: 'e.id', ties: 'desc' }))
    .orderBy('e.at', 'desc')
    .orderBy('e.id', 'desc')
    .limit(limit + 1)
    .execute();
  const page = pageOf(rows, limit, (last) => encodeCursor(Number(last.at), last.id));
  return {
    items: page.rows.map((row) => {
      const event: AuditEvent = {
        id: row.id,
        at: toRfc3339(Number(row.at)),
        action: row.action,
        status: Number(row.status),
        ip: row.ip,
      };
      if (row.target !== null) event.target = row.target;
      if (row.key_id !== null) event.key_id = row.key_id;
      if (row.key_name !== null && row.key_name !== undefined) event.key_name = row.key_name;
      if (row.user_agent !== null) event.user_agent = row.user_agent;
      return event;
    }),
    ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
  };
}
