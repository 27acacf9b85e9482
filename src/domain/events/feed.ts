// What changed in a workspace's jobs, transfers and sends, for the event stream (docs/api.md, "Live
// progress"): each read answers the rows written since a time, and every unfinished job and transfer
// (their bytes move in rows of their own without touching updated_at), as the GET of each answers them.
// The stream drops what it already sent, so reading a row twice costs nothing but the read.
import type { Kysely } from 'kysely';
import type { Job, Transfer } from '../../api/transfers.js';
import type { Database } from '../../db/schema.js';
import { JOB_ACTIVE } from '../../states.js';
import { atLocation, type Caller, withinLocations } from '../caller.js';
import { type SendView, sendView } from '../sends/sends.js';
import type { TransferViews } from '../transfers/views.js';

export type Change =
  | { event: 'job'; id: string; data: Job }
  | { event: 'transfer'; id: string; data: Transfer }
  | { event: 'send'; id: string; data: SendView };

/** Most rows of each kind one read answers: the most recently written first. */
export const CHANGES_PER_READ = 200;

export class ChangeReader {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly views: TransferViews,
  ) {}

  /**
   * Rows the caller may see (src/domain/caller.ts) written at or after `since` (ms), and the unfinished
   * ones.
   */
  async read(caller: Caller, since: number): Promise<Change[]> {
    const { workspaceId } = caller;
    const jobs = await this.db
      .selectFrom('jobs')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where(withinLocations(caller))
      // A transfer's job shows as the transfer (its counts are on it).
      .where('transfer_id', 'is', null)
      .where((eb) => eb.or([eb('updated_at', '>=', since), eb('status', 'in', JOB_ACTIVE)]))
      .orderBy('updated_at', 'desc')
      .limit(CHANGES_PER_READ)
      .execute();
    const transfers = await this.db
      .selectFrom('transfers')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where(withinLocations(caller))
      .where((eb) => eb.or([eb('updated_at', '>=', since), eb('status', '=', 'running')]))
      .orderBy('updated_at', 'desc')
      .limit(CHANGES_PER_READ)
      .execute();
    const sends = await this.db
      .selectFrom('sends')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where(atLocation(caller))
      .where('updated_at', '>=', since)
      .orderBy('updated_at', 'desc')
      .limit(CHANGES_PER_READ)
      .execute();
    const changes: Change[] = [];
    // Oldest first, so that a client applying them in order ends with the newest state.
    for (const row of transfers.reverse())
      changes.push({ event: 'transfer', id: row.id, data: await this.views.viewOf(row) });
    for (const row of jobs.reverse())
      changes.push({ event: 'job', id: row.id, data: await this.views.jobView(row) });
    for (const row of sends.reverse()) changes.push({ event: 'send', id: row.id, data: sendView(row) });
    return changes;
  }
}
