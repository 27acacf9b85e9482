// Keys limited to some locations (docs/api.md, "Scopes"): each API key may name the locations it may
// address, a JSON array of ids fixed when the key is created (null: every location of the workspace).
// Work (transfers, jobs, plans, schedules) gains `location_ids`, the ids it touches as ",id,id,": a key
// with a limit sees a piece of work only when every one of them is within it. Rows made before this
// release are filled here from the ids their JSON already holds (a schedule's labels are read as they
// resolve now); shares and sends name their one location in `location_id` already. A schedule also keeps
// the locations of the key that gave its action (`caller_locations`, null: every one): its runs resolve
// the action's names within them.
// Frozen in time: Kysely<any>, no application imports.
import type { Kysely } from 'kysely';

const BATCH = 500;

/** ",a,b," of the ids, sorted and once each. */
function joined(ids: Iterable<string | undefined>): string | null {
  const set = [...new Set([...ids].filter((id): id is string => typeof id === 'string' && id !== ''))].sort();
  return set.length === 0 ? null : `,${set.join(',')},`;
}

// biome-ignore lint/suspicious/noExplicitAny: JSON of rows written by earlier releases
type Json = any;

/** Every `location_id` anywhere in a JSON value (specs, refs, plan requests). */
function idsIn(value: Json, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) idsIn(item, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === 'location_id' && typeof item === 'string') into.push(item);
      else idsIn(item, into);
    }
  }
  return into;
}

function parse(text: string | null): Json {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

async function fill(
  // biome-ignore lint/suspicious/noExplicitAny: see up()
  db: Kysely<any>,
  table: string,
  columns: string[],
  idsOf: (row: Json) => Promise<string | null> | string | null,
): Promise<void> {
  let after = '';
  for (;;) {
    const rows = await db
      .selectFrom(table)
      .select(['id', ...columns])
      .where('id', '>', after)
      .orderBy('id')
      .limit(BATCH)
      .execute();
    for (const row of rows) {
      const ids = await idsOf(row);
      if (ids !== null)
        await db.updateTable(table).set({ location_ids: ids }).where('id', '=', row.id).execute();
    }
    const last = rows.at(-1);
    if (!last || rows.length < BATCH) return;
    after = last.id as string;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current schema types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('locations', 'text').execute();
  for (const table of ['transfers', 'jobs', 'plans', 'schedules']) {
    await db.schema.alterTable(table).addColumn('location_ids', 'text').execute();
  }
  await db.schema.alterTable('schedules').addColumn('caller_locations', 'text').execute();
  await fill(db, 'transfers', ['spec'], (row) => joined(idsIn(parse(row.spec))));
  await fill(db, 'jobs', ['source', 'destination'], (row) =>
    joined([...idsIn(parse(row.source)), ...idsIn(parse(row.destination))]),
  );
  await fill(db, 'plans', ['request'], (row) => joined(idsIn(parse(row.request))));
  await fill(db, 'schedules', ['workspace_id', 'action'], async (row) => {
    const action = parse(row.action);
    const body = action?.copy ?? action?.sync;
    const ids: string[] = [];
    for (const target of [body?.from, body?.to]) {
      let ref: { id?: string; name?: string } | undefined;
      if (typeof target === 'string' && target.indexOf(':') > 0) {
        const location = target.slice(0, target.indexOf(':'));
        ref = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(location)
          ? { id: location }
          : { name: location };
      } else if (target !== null && typeof target === 'object') ref = target;
      if (ref?.id !== undefined) ids.push(ref.id);
      else if (ref?.name !== undefined) {
        const found = await db
          .selectFrom('locations')
          .select('id')
          .where('workspace_id', '=', row.workspace_id)
          .where('label', '=', ref.name)
          .orderBy('created_at')
          .executeTakeFirst();
        // A label that names nothing now: the schedule's runs fail; keys with a limit do not see it.
        if (!found) return null;
        ids.push(found.id as string);
      }
    }
    return joined(ids);
  });
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('schedules').dropColumn('caller_locations').execute();
  for (const table of ['transfers', 'jobs', 'plans', 'schedules']) {
    await db.schema.alterTable(table).dropColumn('location_ids').execute();
  }
  await db.schema.alterTable('api_keys').dropColumn('locations').execute();
}
