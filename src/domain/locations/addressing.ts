// docs/api.md, "Addressing a location": a body names a location by `name` (its label) and/or `id`.
import type { Kysely } from 'kysely';
import { toRfc3339 } from '../../clock.js';
import type { Database, LocationRow } from '../../db/schema.js';
import { workspaceRow } from '../../db/workspace-row.js';
import { FerryError, invalid, notFound } from '../../errors.js';
import { isUuid } from '../../ids.js';
import { atLocation, type Caller } from '../caller.js';

export interface LocationRef {
  name?: string;
  id?: string;
}

/**
 * The location a reference names, among those the caller may address (src/domain/caller.ts): any other
 * is not found, as one of another workspace is.
 */
export async function resolveLocation(
  db: Kysely<Database>,
  caller: Caller,
  ref: LocationRef,
): Promise<LocationRow> {
  const { workspaceId } = caller;
  const { name, id } = ref;
  if (id === undefined && name === undefined) throw invalid('send the location name or id');
  if (id !== undefined) {
    if (!isUuid(id)) throw invalid('id must be a UUID');
    const row = await workspaceRow(db, 'locations', workspaceId, id, atLocation(caller, 'id'));
    if (!row) throw notFound(`location ${id} was not found`);
    if (name !== undefined && row.label !== name) {
      throw notFound(`no location named "${name}" has the id ${id}`);
    }
    return row;
  }
  const label = name as string;
  const rows = await db
    .selectFrom('locations')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('label', '=', label)
    .where(atLocation(caller, 'id'))
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  const [first] = rows;
  if (!first) throw notFound(`no location is named "${label}"`);
  if (rows.length > 1) {
    throw new FerryError('conflict', `the name "${label}" matches ${rows.length} locations`, {
      body: {
        error: `the name "${label}" matches ${rows.length} locations; resend the request with the id of one of the candidates`,
        name: label,
        candidates: rows.map((r) => ({
          id: r.id,
          provider: r.provider,
          created_at: toRfc3339(r.created_at),
          updated_at: toRfc3339(r.updated_at),
        })),
      },
    });
  }
  return first;
}
