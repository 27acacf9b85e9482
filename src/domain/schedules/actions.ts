// What a schedule runs (docs/api.md, "Schedules"): `{"copy": <body of a bulk POST /v1/copy>}`,
// `{"sync": <body of POST /v1/sync>}` or `{"verify": <body of POST /v1/verify>}`. Each kind is checked, at
// create and patch time and again at each run, by the domain that accepts the route's requests (Copies:
// copy, sync and verify), never by a copy of its rules;
// a run starts the kind's job with the schedule's id on it.
import type { ScheduleRow } from '../../db/schema.js';
import { scheduleAction } from '../../durable/records.js';
import type { AuditContext } from '../audit/audit.js';
import type { Caller } from '../caller.js';
import type { Copies, CopyRequest, SyncRequest, VerifyRequest } from '../transfers/copy.js';

export type ScheduleAction = { copy: CopyRequest } | { sync: SyncRequest } | { verify: VerifyRequest };

/**
 * A schedule's action as stored. The codec checks its outline (src/durable/records.ts); the request in
 * it is checked as its route's is, by check() here at each run, so it is named as the request here.
 */
export function actionOf(row: Pick<ScheduleRow, 'id' | 'action'>): ScheduleAction {
  return scheduleAction.decode(row.action, row.id) as ScheduleAction;
}

export class ScheduleActions {
  constructor(private readonly copies: Copies) {}

  /**
   * 400 (or the 404 and 409 of the action's own route) unless the action would be accepted now; the
   * ids of the locations it names.
   */
  async check(caller: Caller, action: ScheduleAction): Promise<string[]> {
    const checked =
      'copy' in action
        ? await this.copies.checkScheduled(caller, action.copy)
        : 'sync' in action
          ? await this.copies.checkSync(caller, action.sync)
          : await this.copies.checkVerify(caller, action.verify);
    // Its backup's location too (docs/api.md, "Undo"): a key limited to locations must cover it.
    const backup = 'backup' in checked ? checked.backup : undefined;
    return [checked.source.id, checked.destination.id, ...(backup === undefined ? [] : [backup.row.id])];
  }

  /**
   * Starts the action's job for the schedule's run; a run a request made records schedule.run in the
   * job's transaction.
   */
  async start(
    caller: Caller,
    action: ScheduleAction,
    scheduleId: string,
    audit?: AuditContext,
  ): Promise<string> {
    if ('copy' in action)
      return (await this.copies.startScheduled(caller, action.copy, scheduleId, audit)).job_id;
    if ('sync' in action) return (await this.copies.sync(caller, action.sync, scheduleId, audit)).job_id;
    return (await this.copies.verify(caller, action.verify, scheduleId, audit)).job_id;
  }
}
