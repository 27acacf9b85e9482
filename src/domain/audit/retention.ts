// The audit log's retention (docs/api.md, "Audit log"): events older than FERRY_AUDIT_RETENTION_DAYS
// leave the database in batches, by the pruner (src/domain/retention/pruner.ts), each batch its own
// short transaction. Refused authentications (no workspace) go the same way.
import type { Queryable } from '../../queue/moves.js';
import { rowsChanged } from '../../queue/moves.js';

/** Deletes at most `limit` events recorded before `cutoff`, oldest first; how many went. */
export async function pruneAudit(q: Queryable, cutoff: number, limit: number): Promise<number> {
  const picked = await q
    .selectFrom('audit_events')
    .select('id')
    .where('at', '<', cutoff)
    .orderBy('at')
    .limit(limit)
    .execute();
  if (picked.length === 0) return 0;
  const result = await q
    .deleteFrom('audit_events')
    .where(
      'id',
      'in',
      picked.map((row) => row.id),
    )
    .executeTakeFirst();
  return rowsChanged(result);
}
