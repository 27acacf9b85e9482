// A workspace's row by the id a caller sent: the one query by which the domain finds a transfer, job,
// schedule, key, webhook, send, share, location or plan of the caller's workspace. A row of another
// workspace is not found, as one that does not exist is (docs/api.md: "another workspace's: 404"), and
// an id that is not a UUID finds nothing without a query.
import { type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import { isUuid } from '../ids.js';
import type { Database } from './schema.js';

/** The tables whose rows belong to one workspace and are addressed by id. */
type Owned =
  | 'transfers'
  | 'jobs'
  | 'schedules'
  | 'api_keys'
  | 'webhooks'
  | 'sends'
  | 'shares'
  | 'locations'
  | 'plans';

/**
 * The row of `table` with `id` in the workspace, undefined when there is none. `within` narrows it
 * further: the locations the caller may address (src/domain/caller.ts), a job that is no transfer's.
 */
export async function workspaceRow<T extends Owned>(
  db: Kysely<Database>,
  table: T,
  workspaceId: string,
  id: string,
  within: RawBuilder<boolean> = sql<boolean>`1 = 1`,
): Promise<Selectable<Database[T]> | undefined> {
  if (!isUuid(id)) return undefined;
  // One query for every such table: each has the columns it reads (id, workspace_id).
  const row = await db
    .selectFrom(table as Owned as 'transfers')
    .selectAll()
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where(within)
    .executeTakeFirst();
  return row as Selectable<Database[T]> | undefined;
}
