// What a queued transfer or job holds: the request with every location resolved to its id at accept
// time. A location deleted afterwards makes the work fail, as any
// request with it would (docs/api.md, "Operations" under "Locations").
import {
  type DestinationRef,
  type JobOptions,
  jobDestination,
  jobOptions,
  jobSource,
  type ObjectRef,
  type ObjectWork,
  objectWork,
  type TransferSpec,
  transferSpec,
} from '../durable/work.js';

// The shapes are declared once, as the schemas their columns are checked against (src/durable/work.ts).
export type { DestinationRef, JobOptions, ObjectRef, ObjectWork, TransferSpec };

/** A transfer's spec (src/durable/work.ts refuses one this version cannot read). */
export function decodeSpec(row: { id: string; spec: string }): TransferSpec {
  return transferSpec.decode(row.spec, row.id);
}

/** A job's source prefix. */
export function sourceOf(row: { id: string; source: string }): ObjectRef {
  return jobSource.decode(row.source, row.id);
}

/** A job's destination prefix. */
export function destinationOf(row: { id: string; destination: string }): ObjectRef {
  return jobDestination.decode(row.destination, row.id);
}

/** A job object's own work; null for a bulk copy's object, which has only its key. */
export function workOf(row: { job_id: string; seq: number; work: string | null }): ObjectWork | null {
  return row.work === null ? null : objectWork.decode(row.work, `${row.job_id}/${row.seq}`);
}

/** A jobs row's options (null: none). */
export function decodeOptions(row: { id: string; options: string | null }): JobOptions {
  return row.options === null ? {} : jobOptions.decode(row.options, row.id);
}

/**
 * The `location_ids` column of a piece of work (transfers, jobs, plans, schedules): ",id,id,", sorted,
 * each once. The form lets one SQL expression, the same on SQLite and PostgreSQL, test that every id is
 * within a key's locations (src/domain/caller.ts, withinLocations).
 */
export function locationIds(ids: Iterable<string>): string {
  return `,${[...new Set(ids)].sort().join(',')},`;
}

/** The locations a transfer touches. */
export function specLocations(spec: TransferSpec): string[] {
  switch (spec.kind) {
    case 'copy':
      return [spec.source.location_id, spec.destination.location_id];
    case 'move':
      return [
        ...spec.sources.map((ref) => ref.location_id),
        spec.destination.location_id,
        ...(spec.backup === undefined ? [] : [spec.backup.location_id]),
      ];
    case 'remove':
      return [
        ...spec.paths.map((ref) => ref.location_id),
        ...(spec.backup === undefined ? [] : [spec.backup.location_id]),
      ];
    case 'pull':
      return [spec.destination.location_id];
  }
}

/** The locations an object's work touches (for the per-location limit). */
export function locationsOf(work: ObjectWork): string[] {
  const backup = 'backup' in work && work.backup !== undefined ? [work.backup.location_id] : [];
  switch (work.op) {
    case 'move':
      return [work.source.location_id, work.destination.location_id, ...backup];
    case 'remove':
      return [work.source.location_id, ...backup];
    case 'pull':
      return [work.destination.location_id];
    case 'delete':
      return [work.target.location_id, ...backup];
    case 'verify':
      return [work.source.location_id, work.destination.location_id];
    case 'unwrite':
    case 'restore': {
      const t = work.touched;
      return [t.target, t.backup, t.source].flatMap((ref) => (ref === undefined ? [] : [ref.location_id]));
    }
  }
}

/** A transfer over several objects: a pattern, several sources or several URLs (docs/api.md, "Polling"). */
export function isSeveral(spec: TransferSpec, isPattern: (ref: ObjectRef) => boolean): boolean {
  switch (spec.kind) {
    case 'copy':
      return false;
    // With a backup, even one object runs as a job's object: what it did is kept for an undo.
    case 'move':
      return spec.backup !== undefined || spec.sources.length > 1 || spec.sources.some(isPattern);
    case 'remove':
      return spec.backup !== undefined || spec.paths.length > 1 || spec.paths.some(isPattern);
    case 'pull':
      return spec.urls.length > 1;
  }
}
