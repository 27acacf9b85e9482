// `backup_to` (docs/api.md, "Undo"): where a remove, move, sync or bulk copy keeps every object it
// deletes or overwrites, checked as a copy's target is: the location exists and is within the key's
// locations, it is usable, the path is a prefix's, and it is neither inside the prefix the work changes
// nor holds it (a sync that deletes would otherwise remove its own backups, or back them up).
import type { LocationRow } from '../../db/schema.js';
import { jobBackup } from '../../engine/backup.js';
import { invalid } from '../../errors.js';
import type { ObjectRef } from '../../lifecycle/specs.js';
import type { Caller } from '../caller.js';
import type { Locations } from '../locations/locations.js';
import { checkUsable } from '../locations/usable.js';
import { checkPrefix, parseTarget, prefixesOverlap } from './targets.js';

export interface BackupTo {
  row: LocationRow;
  /** The prefix given, ending with "/". */
  path: string;
  /** As given, for the job's view. */
  given: string;
}

/** The backup target of a request, checked; undefined without one. `changes`: the prefixes the work changes. */
export async function checkBackupTo(
  locations: Locations,
  caller: Caller,
  given: unknown,
  changes: readonly ObjectRef[],
  now: number,
): Promise<BackupTo | undefined> {
  if (given === undefined) return undefined;
  if (typeof given !== 'string') throw invalid('backup_to must be "<location>:<bucket>/<prefix>"');
  const target = parseTarget(given, 'backup_to');
  const path = target.path.endsWith('/') ? target.path : `${target.path}/`;
  checkPrefix(path, 'backup_to');
  const row = await locations.resolve(caller, target.ref);
  checkUsable(row, now, 'backups');
  for (const changed of changes) {
    if (changed.location_id === row.id && prefixesOverlap(path, changed.path)) {
      throw invalid(
        `backup_to (${path}) must not lie inside the prefix the work changes (${changed.path}), nor hold it`,
      );
    }
  }
  return { row, path, given };
}

/** Where the work's objects are kept: `<prefix>/<id>/`, with the job's (or the transfer's) id. */
export function backupRef(backup: BackupTo, id: string): ObjectRef {
  return jobBackup({ location_id: backup.row.id, path: backup.path }, id);
}

/** A dry run's plan runs without a backup: 400 rather than a run that would keep nothing. */
export function noBackupInPlans(): Error {
  return invalid('backup_to is not taken with dry_run: a plan runs without a backup');
}
