// What a queued transfer or job holds: the request with every location resolved to its id at accept
// time. A location deleted afterwards makes the work fail, as any
// request with it would (docs/api.md, "Operations" under "Locations").
import type { FilterSpec, JobOptions } from '../api/transfers.js';
import type { VerifyMode } from '../states.js';
import type { Touched } from './backup.js';

export type { JobOptions };

export interface ObjectRef {
  location_id: string;
  path: string;
  /** The path is exact bytes, never a pattern (docs/api.md, "Exact names"); absent means false. */
  literal?: true;
}

/** A destination that is a folder ends with "/": each source keeps its own name inside it. */
export interface DestinationRef extends ObjectRef {
  folder: boolean;
}

export type TransferSpec =
  | { kind: 'copy'; source: ObjectRef; destination: ObjectRef }
  | {
      kind: 'move';
      sources: ObjectRef[];
      destination: DestinationRef;
      filter?: FilterSpec;
      /** Where what it overwrites is kept, `<prefix>/<transfer id>/` (docs/api.md, "Undo"). */
      backup?: ObjectRef;
      /** `backup_to` as given, for the transfer's view. */
      backup_to?: string;
    }
  | {
      kind: 'remove';
      paths: ObjectRef[];
      filter?: FilterSpec;
      /** Where what it removes is kept, `<prefix>/<transfer id>/` (docs/api.md, "Undo"). */
      backup?: ObjectRef;
      /** `backup_to` as given, for the transfer's view. */
      backup_to?: string;
    }
  | { kind: 'pull'; urls: string[]; destination: DestinationRef };

export function encodeSpec(spec: TransferSpec): string {
  return JSON.stringify(spec);
}

export function decodeSpec(text: string): TransferSpec {
  return JSON.parse(text) as TransferSpec;
}

export function decodeRef(text: string): ObjectRef {
  return JSON.parse(text) as ObjectRef;
}

export { decodeOptions } from '../api/views.js';

/**
 * One object of a transfer over several objects (a job object's `work`): moved, removed or pulled,
 * with its full source and destination.
 */
export type ObjectWork =
  /** `backup`: where the object it overwrites is kept first (docs/api.md, "Undo"); so for remove and delete. */
  | { op: 'move'; source: ObjectRef; destination: ObjectRef; backup?: ObjectRef }
  | { op: 'remove'; source: ObjectRef; backup?: ObjectRef }
  | { op: 'pull'; url: string; destination: DestinationRef }
  /** A sync's deletion of a destination object its source lacks (counted as deleted). */
  | { op: 'delete'; target: ObjectRef; backup?: ObjectRef }
  /**
   * A verify's comparison its listings could not decide (docs/api.md, "Verify"): the two objects stat'ed,
   * and read and hashed where no hash kind is common to both; nothing is written.
   */
  | { op: 'verify'; source: ObjectRef; destination: ObjectRef; mode: VerifyMode }
  /** An undo's object (src/engine/undo.ts): one a job created, removed again. */
  | { op: 'unwrite'; touched: Touched }
  /** An undo's object: one a job replaced, deleted or moved, put back. */
  | { op: 'restore'; touched: Touched };

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
