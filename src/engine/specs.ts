// What a queued transfer or job holds: the request with every location resolved to its id at accept
// time. A location deleted afterwards makes the work fail, as any
// request with it would (docs/api.md, "Operations" under "Locations").
import type { FilterSpec, JobOptions } from '../api/transfers.js';
import type { VerifyMode } from '../states.js';

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
  | { kind: 'move'; sources: ObjectRef[]; destination: DestinationRef; filter?: FilterSpec }
  | { kind: 'remove'; paths: ObjectRef[]; filter?: FilterSpec }
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
  | { op: 'move'; source: ObjectRef; destination: ObjectRef }
  | { op: 'remove'; source: ObjectRef }
  | { op: 'pull'; url: string; destination: DestinationRef }
  /** A sync's deletion of a destination object its source lacks (counted as deleted). */
  | { op: 'delete'; target: ObjectRef }
  /**
   * A verify's comparison its listings could not decide (docs/api.md, "Verify"): the two objects stat'ed,
   * and read and hashed where no hash kind is common to both; nothing is written.
   */
  | { op: 'verify'; source: ObjectRef; destination: ObjectRef; mode: VerifyMode };

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
      return [...spec.sources.map((ref) => ref.location_id), spec.destination.location_id];
    case 'remove':
      return spec.paths.map((ref) => ref.location_id);
    case 'pull':
      return [spec.destination.location_id];
  }
}

/** The locations an object's work touches (for the per-location limit). */
export function locationsOf(work: ObjectWork): string[] {
  switch (work.op) {
    case 'move':
      return [work.source.location_id, work.destination.location_id];
    case 'remove':
      return [work.source.location_id];
    case 'pull':
      return [work.destination.location_id];
    case 'delete':
      return [work.target.location_id];
    case 'verify':
      return [work.source.location_id, work.destination.location_id];
  }
}

/** A transfer over several objects: a pattern, several sources or several URLs (docs/api.md, "Polling"). */
export function isSeveral(spec: TransferSpec, isPattern: (ref: ObjectRef) => boolean): boolean {
  switch (spec.kind) {
    case 'copy':
      return false;
    case 'move':
      return spec.sources.length > 1 || spec.sources.some(isPattern);
    case 'remove':
      return spec.paths.length > 1 || spec.paths.some(isPattern);
    case 'pull':
      return spec.urls.length > 1;
  }
}
