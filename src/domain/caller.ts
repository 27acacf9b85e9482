// Who asks (docs/api.md, "Scopes"): a workspace, and the locations its key may address. A key limited to
// some locations finds nothing else: another location, and any work, share or send that touches one,
// does not exist for it (404), and no list shows it. Every domain method a route calls with a caller
// narrows by it here; work done by ferry itself (workers, the scheduler's runs) acts for the workspace.
import { type RawBuilder, sql } from 'kysely';

export interface Caller {
  readonly workspaceId: string;
  /** The location ids the key may address; null: every location of the workspace. */
  readonly locations: ReadonlySet<string> | null;
}

/** The whole workspace: the operator's door, and what ferry does on its own. */
export function wholeWorkspace(workspaceId: string): Caller {
  return { workspaceId, locations: null };
}

export function mayAddress(caller: Caller, locationId: string): boolean {
  return caller.locations === null || caller.locations.has(locationId);
}

/**
 * True for rows whose work (its `location_ids`, src/lifecycle/specs.ts) touches only locations the caller may address: removing ",<id>" for each
 * allowed id leaves "," exactly when nothing else was there (ids are UUIDs of one length, so no removal
 * takes part of another). A null column (a schedule whose label named nothing at the upgrade) is never
 * within a limit.
 */
export function withinLocations(caller: Caller, column = 'location_ids'): RawBuilder<boolean> {
  if (caller.locations === null) return sql<boolean>`1 = 1`;
  let stripped: RawBuilder<unknown> = sql.ref(column);
  for (const id of caller.locations) stripped = sql`replace(${stripped}, ${`,${id}`}, '')`;
  return sql<boolean>`${stripped} = ','`;
}

/** True for rows whose one location (`location_id` of a share or a send) the caller may address. */
export function atLocation(caller: Caller, column = 'location_id'): RawBuilder<boolean> {
  if (caller.locations === null) return sql<boolean>`1 = 1`;
  if (caller.locations.size === 0) return sql<boolean>`1 = 0`;
  return sql<boolean>`${sql.ref(column)} in (${sql.join([...caller.locations])})`;
}
