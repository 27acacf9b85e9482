// What the CLI knows of scoped keys (docs/api.md, "Scopes"; docs/cli.md, "keys"): the five scopes, the
// --scope and --location flags' words, and how a key's scopes and locations are shown. Kept free of
// runtime imports from the server's modules so that the client starts fast.
import type { Scope } from '../api/keys.js';
import { CliError, EXIT, usageError } from './exit.js';

/** In the API's order (read, transfer, remove, share, admin). */
export const SCOPES = ['read', 'transfer', 'remove', 'share', 'admin'] as const satisfies readonly Scope[];
// Fails to compile when the API gains a scope this list lacks.
const everyScope: Record<Scope, true> = Object.fromEntries(SCOPES.map((s) => [s, true])) as Record<
  (typeof SCOPES)[number],
  true
>;
void everyScope;

/** The words of a repeatable, comma-separated flag: trimmed, in order, each once. */
function words(values: readonly string[] | undefined, flag: string): string[] {
  const out: string[] = [];
  for (const value of values ?? []) {
    for (const word of String(value).split(',')) {
      const w = word.trim();
      if (w === '')
        throw usageError(`${flag} takes a non-empty word (several: repeat it or separate with commas)`);
      if (!out.includes(w)) out.push(w);
    }
  }
  return out;
}

/** `--scope read --scope transfer` or `--scope read,transfer`: the scopes in the API's order, or undefined. */
export function parseScopes(values: readonly string[] | undefined): Scope[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  const asked = words(values, '--scope');
  const bad = asked.find((w) => !(SCOPES as readonly string[]).includes(w));
  if (bad !== undefined)
    throw usageError(`--scope: "${bad}" is not a scope; use one or more of ${SCOPES.join(', ')}`);
  return SCOPES.filter((s) => asked.includes(s));
}

/** `--location photos --location archive` or `--location photos,archive`: labels or ids, or undefined. */
export function parseLocationWords(values: readonly string[] | undefined): string[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  return words(values, '--location');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (text: string) => UUID.test(text);

export interface KnownLocation {
  id: string;
  label: string;
  provider: string;
  created_at: string;
}

/**
 * The ids of the locations named by label or id among `known` (a workspace's locations). An unknown
 * name is exit 3, a label several locations share exit 4 with their ids, as for places.
 */
export function locationIds(
  names: readonly string[],
  known: readonly KnownLocation[],
  when: (iso: string) => string,
): string[] {
  const ids: string[] = [];
  for (const name of names) {
    const byId = isUuid(name) ? known.find((l) => l.id.toLowerCase() === name.toLowerCase()) : undefined;
    const matches = byId ? [byId] : known.filter((l) => l.label === name);
    const [first] = matches;
    if (!first)
      throw new CliError(
        isUuid(name) ? `location ${name} was not found` : `no location is named "${name}"`,
        EXIT.notFound,
      );
    if (matches.length > 1) {
      const lines = matches.map((c) => `  ${c.id}  ${c.provider}  created ${when(c.created_at)}`);
      throw new CliError(
        `--location: the name "${name}" matches ${matches.length} locations; use the id of one in place of the name:\n${lines.join('\n')}`,
        EXIT.conflict,
      );
    }
    if (!ids.includes(first.id)) ids.push(first.id);
  }
  return ids;
}

/** "all" for every scope, else the list. */
export function showScopes(scopes: readonly string[]): string {
  return SCOPES.every((s) => scopes.includes(s)) ? 'all' : scopes.join(',');
}

/**
 * "all" for a key not limited to locations, else each location's label where it is known and names one
 * location only, its id otherwise; `withIds` adds the id after each label.
 */
export function showLocations(
  ids: readonly string[] | undefined,
  known: readonly { id: string; label: string }[] | undefined,
  withIds = false,
): string {
  if (ids === undefined) return 'all';
  return ids
    .map((id) => {
      const loc = known?.find((l) => l.id === id);
      const unique = loc !== undefined && known?.filter((l) => l.label === loc.label).length === 1;
      if (!loc || !unique) return id;
      return withIds ? `${loc.label} (${id})` : loc.label;
    })
    .join(withIds ? ', ' : ',');
}
