// What a job's planners hand the planner for each object (the listing's key, size and hashes, its own
// work, whether it is held or already decided), and the store they list through: shared by the planner
// (planner.ts) and the plans of a sync, a verify and an undo (sync-plan.ts, verify-plan.ts, undo.ts).

import type { Found, Held } from '../lifecycle/object-planning.js';
import type { Entry, Store } from '../stores/contract.js';

export interface Planned {
  key: string;
  size: number | null;
  etag: string | null;
  /** The hashes the source's listing reported, which the object's first attempt checks (Entry.hashes). */
  hashes?: NonNullable<Entry['hashes']>;
  work?: string;
  /**
   * Planned straight as skipped, with the reason: a sync's object equal at the destination, or a plan's
   * run finding a key the plan lacks.
   */
  skipped?: string;
  held?: Held;
  /** A verify's object its listings decided (src/engine/verify-plan.ts): planned settled. */
  found?: Found;
  /** What is known before it runs of what its work will do (src/engine/backup.ts, PLANNED_CREATED). */
  touched?: string;
}

/** A location's store, opened for a while: the engine's cache, or the API's own for a dry run. */
export type OpenStore = (locationId: string) => Promise<{ store: Store; release: () => unknown }>;
