// Workspaces own keys and locations. They are created by name: by the first start (`default`) and by
// `ferry keys create --workspace NAME`.
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database, WorkspaceRow } from '../db/schema.js';
import { newId } from '../ids.js';

export async function findWorkspace(db: Kysely<Database>, name: string): Promise<WorkspaceRow | undefined> {
  return db.selectFrom('workspaces').selectAll().where('name', '=', name).executeTakeFirst();
}

/** The workspace named `name`, created if new. Safe when several processes race to create it. */
export async function ensureWorkspace(
  db: Kysely<Database>,
  name: string,
  clock: Clock,
): Promise<WorkspaceRow> {
  const existing = await findWorkspace(db, name);
  if (existing) return existing;
  await db
    .insertInto('workspaces')
    .values({ id: newId(), name, created_at: clock.now() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await findWorkspace(db, name);
  if (!row) throw new Error(`workspace ${name} could not be created`);
  return row;
}
