// Filters on the objects a bulk copy, a sync, or a patterned move or remove works on (docs/api.md,
// "Filters"): include and exclude globs in the pattern dialect of glob.ts, sizes in bytes and
// modification times. An object must pass every rule given: with `include`, it must match one of them;
// with `exclude`, none.
//
// Where a glob applies, as rclone's filters and .gitignore decide it: a glob without `/` is matched
// against the object's name (its last segment), so `*.tmp` and `.DS_Store` catch those files at any
// depth; a glob with `/` anywhere is matched against the whole path relative to the folder the work
// lists (the source prefix, or a pattern's literal base), anchored there: `logs/**` is the top `logs`
// folder only, `**/logs/**` every one.
//
// The filter is applied while listing. An exclude that ends in `/**` covers whole folders (`logs/**`,
// `*/tmp/**`): when there is one, the listing walks folder by folder without recursion and never lists
// a folder such an exclude covers. Without one a recursive listing (one request per page on bucket
// stores) is the cheaper, and every entry is tested as it streams.
//
// Cost is bounded (docs/api.md, "Limits"): at most FILTER_MAX_GLOBS globs, each within the pattern
// limits, and matching yields to the event loop every few milliseconds, as expandSources does.
import type { FilterSpec } from '../api/transfers.js';
import { invalid, isFerryError } from '../errors.js';
import type { Entry, Store } from '../stores/contract.js';
import { slicer } from '../util/slicer.js';
import { compileGlob, type GlobMatcher, type PatternLimits } from './glob.js';

/** At most this many globs in `include` and in `exclude`, each. */
export const FILTER_MAX_GLOBS = 100;

/** A filter as a request gives it. */
export interface FilterInput {
  include?: string[];
  exclude?: string[];
  min_size?: number;
  max_size?: number;
  modified_after?: string;
  modified_before?: string;
}

export type { FilterSpec };

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function checkGlobs(globs: unknown, field: string, limits: PatternLimits): string[] | undefined {
  if (globs === undefined) return undefined;
  if (!Array.isArray(globs)) throw invalid(`${field} must be a list of globs`);
  if (globs.length > FILTER_MAX_GLOBS) throw invalid(`${field} may hold at most ${FILTER_MAX_GLOBS} globs`);
  globs.forEach((glob: unknown, i) => {
    const where = `${field}[${i}]`;
    if (typeof glob !== 'string' || glob === '') throw invalid(`${where} must be a non-empty glob`);
    if (glob.startsWith('/'))
      throw invalid(
        `${where} must not start with "/": a glob holding a "/" is anchored at the source prefix already (one without matches a name at any depth)`,
      );
    try {
      compileGlob(glob, limits);
    } catch (err) {
      if (isFerryError(err, 'invalid')) throw invalid(`${where}: ${err.message}`);
      throw err;
    }
  });
  return globs as string[];
}

function checkSize(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw invalid(`${field} must be a whole number of bytes, 0 or more`);
  return value;
}

function checkTime(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = typeof value === 'string' && RFC3339.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw invalid(`${field} must be an RFC 3339 time, e.g. 2026-11-27T09:00:00Z`);
  return ms;
}

/** Checks a request's filter (400 naming the field) and answers it as queued work stores it. */
export function parseFilter(input: FilterInput, limits: PatternLimits, field = 'filter'): FilterSpec {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw invalid(`${field} must be an object`);
  const spec: FilterSpec = {};
  const include = checkGlobs(input.include, `${field}.include`, limits);
  const exclude = checkGlobs(input.exclude, `${field}.exclude`, limits);
  const min = checkSize(input.min_size, `${field}.min_size`);
  const max = checkSize(input.max_size, `${field}.max_size`);
  const after = checkTime(input.modified_after, `${field}.modified_after`);
  const before = checkTime(input.modified_before, `${field}.modified_before`);
  if (min !== undefined && max !== undefined && min > max)
    throw invalid(`${field}.min_size (${min}) is larger than ${field}.max_size (${max})`);
  if (after !== undefined && before !== undefined && after >= before)
    throw invalid(`${field}.modified_after must be earlier than ${field}.modified_before`);
  if (include !== undefined) spec.include = include;
  if (exclude !== undefined) spec.exclude = exclude;
  if (min !== undefined) spec.min_size = min;
  if (max !== undefined) spec.max_size = max;
  if (after !== undefined) spec.modified_after = after;
  if (before !== undefined) spec.modified_before = before;
  return spec;
}

/** State steps of matching between looks at the clock (as expandSources). */
const WORK_PER_LOOK = 20_000;

/** A filter's glob, compiled, and what it is matched against. */
interface FilterGlob {
  matcher: GlobMatcher;
  /** It holds a `/`: matched against the whole relative path; otherwise against the name alone. */
  anchored: boolean;
}

function filterGlob(glob: string): FilterGlob {
  return { matcher: compileGlob(glob), anchored: glob.includes('/') };
}

/** A compiled filter: a predicate on listed entries, and which folders a listing may skip. */
export class Filter {
  private readonly include: FilterGlob[];
  private readonly exclude: FilterGlob[];
  /**
   * Heads of the excludes that end in `/**` (anchored, as every glob with a `/` is): a folder one of
   * them matches is excluded whole.
   */
  private readonly folders: GlobMatcher[];
  private readonly pause = slicer();
  /** State steps spent matching so far (read by `work`). */
  private spent = 0;

  constructor(private readonly spec: FilterSpec) {
    // Compiled under the ceilings: the filter was checked under the settings when it was accepted.
    this.include = (spec.include ?? []).map(filterGlob);
    this.exclude = (spec.exclude ?? []).map(filterGlob);
    this.folders = (spec.exclude ?? [])
      .filter((g) => g.endsWith('/**') && g.length > 3 && !g.endsWith('\\/**'))
      .map((g) => compileGlob(g.slice(0, -3)));
  }

  /** Whether some exclude covers whole folders, so that walking folder by folder lists less. */
  get prunes(): boolean {
    return this.folders.length > 0;
  }

  /**
   * Automaton state steps spent on every path this filter has decided: what its cost is made of, at
   * most each path's length × the states of each glob tried on it (read-only; the tests bound it).
   */
  get work(): number {
    return this.spent;
  }

  private async matches(matcher: GlobMatcher, path: string): Promise<boolean> {
    matcher.begin(path);
    while (!matcher.advance(WORK_PER_LOOK)) await this.pause();
    this.spent += matcher.work;
    return matcher.result();
  }

  /** Whether the folder at `relative` (no trailing "/") is excluded whole, so need not be listed. */
  async skipsFolder(relative: string): Promise<boolean> {
    for (const head of this.folders) if (await this.matches(head, relative)) return true;
    return false;
  }

  /** Whether an object at `relative` with this size and time passes every rule. */
  async passes(relative: string, entry: Pick<Entry, 'size' | 'modTime'>): Promise<boolean> {
    const s = this.spec;
    if (s.min_size !== undefined && entry.size < s.min_size) return false;
    if (s.max_size !== undefined && entry.size > s.max_size) return false;
    // An object whose listing gives no time cannot be shown to be in the window: it is left out.
    const time = entry.modTime?.getTime();
    if (s.modified_after !== undefined && (time === undefined || time <= s.modified_after)) return false;
    if (s.modified_before !== undefined && (time === undefined || time >= s.modified_before)) return false;
    await this.pause();
    const name = relative.slice(relative.lastIndexOf('/') + 1);
    const test = (g: FilterGlob) => this.matches(g.matcher, g.anchored ? relative : name);
    if (this.include.length > 0) {
      let any = false;
      for (const g of this.include) {
        if (await test(g)) {
          any = true;
          break;
        }
      }
      if (!any) return false;
    }
    for (const g of this.exclude) if (await test(g)) return false;
    return true;
  }
}

/** The compiled filter of a stored spec, or undefined for none. */
export function compileFilter(spec: FilterSpec | undefined): Filter | undefined {
  return spec === undefined ? undefined : new Filter(spec);
}

/**
 * The files under `folder` ("" for the root; no trailing "/"), at any depth when `recursive`, that
 * pass `filter` (relative to the folder), streamed. Throws not_found as store.list does for `folder`.
 * With a filter whose excludes cover whole folders, it walks folder by folder and never lists those.
 */
export async function* listFiltered(
  store: Store,
  folder: string,
  options: { recursive: boolean; filter?: Filter | undefined; signal?: AbortSignal | undefined },
): AsyncGenerator<Entry> {
  const { filter, recursive } = options;
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const prefix = folder === '' ? '' : `${folder}/`;
  const pause = slicer();
  if (filter === undefined || !filter.prunes || !recursive) {
    for await (const entry of store.list(folder, { recursive, ...signal })) {
      await pause();
      if (entry.isDir || !entry.path.startsWith(prefix)) continue;
      if (filter === undefined || (await filter.passes(entry.path.slice(prefix.length), entry))) yield entry;
    }
    return;
  }
  // Depth first, one folder's listing at a time: memory holds the folders still to list.
  const pending: string[] = [folder];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const below: string[] = [];
    try {
      for await (const entry of store.list(next, { recursive: false, ...signal })) {
        await pause();
        if (!entry.path.startsWith(prefix)) continue;
        const relative = entry.path.slice(prefix.length);
        if (entry.isDir) {
          if (!(await filter.skipsFolder(relative))) below.push(entry.path);
          continue;
        }
        if (await filter.passes(relative, entry)) yield entry;
      }
    } catch (err) {
      // A folder below emptied since its parent was listed has nothing left to list.
      if (next === folder || !isFerryError(err, 'not_found')) throw err;
    }
    for (let i = below.length - 1; i >= 0; i--) pending.push(below[i] as string);
  }
}
