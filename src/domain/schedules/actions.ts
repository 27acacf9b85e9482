// What a schedule runs (docs/api.md, "Schedules"): `{"copy": <body of a bulk POST /v1/copy>}` or
// `{"sync": <body of POST /v1/sync>}`. Each kind is checked, at create and patch time and again at each
// run, by the domain that accepts the route's requests (Copies, Syncs), never by a copy of its rules;
// a run starts the kind's job with the schedule's id on it.
import { invalid } from '../../errors.js';
import type { Copies, CopyRequest } from '../transfers/copy.js';

/** The body of POST /v1/sync, as the sync domain reads it. */
export type SyncBody = Record<string, unknown>;

export type ScheduleAction = { copy: CopyRequest } | { sync: SyncBody };

/** The one door to sync a schedule needs. */
export interface SyncStarter {
  /** Everything POST /v1/sync checks (400, 404, 409), starting nothing. */
  check(workspaceId: string, body: SyncBody): Promise<void>;
  /** Starts a sync job carrying `scheduleId`, as POST /v1/sync would. */
  start(workspaceId: string, body: SyncBody, scheduleId: string): Promise<{ job_id: string }>;
}

// MERGE: wt-a's Syncs (src/domain/transfers/sync.ts) takes this place in src/services.ts once sync
// exists; until then a schedule's sync action is refused as POST /v1/sync would be absent.
export const SYNC_NOT_AVAILABLE: SyncStarter = {
  check: () => Promise.reject(invalid('action.sync: sync is not available')),
  start: () => Promise.reject(invalid('action.sync: sync is not available')),
};

export class ScheduleActions {
  constructor(
    private readonly copies: Copies,
    private readonly syncs: SyncStarter,
  ) {}

  /** 400 (or the 404 and 409 of the action's own route) unless the action would be accepted now. */
  async check(workspaceId: string, action: ScheduleAction): Promise<void> {
    if ('copy' in action) await this.copies.checkScheduled(workspaceId, action.copy);
    else await this.syncs.check(workspaceId, action.sync);
  }

  /** Starts the action's job for the schedule's run. */
  async start(workspaceId: string, action: ScheduleAction, scheduleId: string): Promise<string> {
    if ('copy' in action)
      return (await this.copies.startScheduled(workspaceId, action.copy, scheduleId)).job_id;
    return (await this.syncs.start(workspaceId, action.sync, scheduleId)).job_id;
  }
}
