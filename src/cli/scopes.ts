// What the CLI knows of scoped keys (docs/api.md, "Scopes"; docs/cli.md, "keys"): the five scopes, the
// --scope and --location flags' words, and how a key's scopes are shown. Kept free of
// runtime imports from the server's modules so that the client starts fast.
import type { LocationSummary } from '../api/routes.js';
import { SCOPES, type Scope } from '../api/scopes.js';
import { CliError, EXIT, usageError } from './exit.js';
import type { Api } from './http.js';

export { SCOPES };

/** The words of a repeatable, comma-separated flag: trimmed, in order, each once. */
export function words(values: readonly string[] | undefined, flag: string): string[] {
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

/** "all" for every scope, else the list. */
export function showScopes(scopes: readonly string[]): string {
  return SCOPES.every((s) => scopes.includes(s)) ? 'all' : scopes.join(',');
}

/**
 * Refuses early, before anything is sent, what the key's scopes would have the server refuse halfway:
 * `what` needs `scope` (docs/api.md, "Scopes": a sync or plan that deletes needs `remove` as well as
 * `transfer`). The key reads its own scopes with GET /v1/key, which any valid key may. Exit 5, as the
 * server's 403 naming a scope.
 */
export async function requireScope(api: Api, scope: Scope, what: string, otherwise: string): Promise<void> {
  const key = await api.get('/v1/key');
  if (key.scopes.includes(scope)) return;
  throw new CliError(
    `${what} needs the "${scope}" scope, which this API key ("${key.name}") lacks: it has ${key.scopes.join(', ') || 'none'}; ${otherwise}, or use a key with "${scope}" (ferry keys create NAME --scope ${SCOPES.filter((s) => s === scope || key.scopes.includes(s)).join(',')}); ferry whoami shows what this key may do`,
    EXIT.auth,
    true,
  );
}

/** A location as GET /v1/locations lists it, of which --location reads the id and label. */
export type LocationItem = Pick<LocationSummary, 'id' | 'label'>;

/**
 * The ids of `--location` words (labels or ids) among the locations the key sees: a label that names
 * none is "not found" (exit 3), one that names several asks for the id.
 */
export function locationIds(asked: readonly string[], seen: readonly LocationItem[]): string[] {
  return asked.map((word) => {
    const byId = seen.find((l) => l.id === word.toLowerCase());
    if (byId) return byId.id;
    const named = seen.filter((l) => l.label === word);
    if (named.length === 1) return (named[0] as LocationItem).id;
    if (named.length === 0) throw new CliError(`--location: no location is named "${word}"`, EXIT.notFound);
    throw usageError(`--location: ${named.length} locations are named "${word}"; give the id of one`);
  });
}
