// Where a move, remove or pull reads and writes (docs/api.md, "Move, remove, pull"): each path given
// as <location>/<path>, the first segment being the location's label or UUID, resolved and checked
// (a file or a pattern, a destination that can take what arrives, an active location) before
// anything is queued or previewed.

import { MAX_SOURCES } from '../../api/input.js';
import type { LocationRow } from '../../db/schema.js';
import { conflict, invalid, isFerryError, notFound } from '../../errors.js';
import { isUuid } from '../../ids.js';
import type { ObjectRef } from '../../lifecycle/specs.js';
import { type FilterInput, type FilterSpec, parseFilter } from '../../objects/filter.js';
import type { PatternLimits } from '../../objects/glob.js';
import { checkPattern, isPattern, splitPattern } from '../../objects/patterns.js';
import { hasBuckets } from '../../providers.js';
import { slicer } from '../../util/slicer.js';
import type { Caller } from '../caller.js';
import type { Locations } from '../locations/locations.js';

export interface Resolved {
  row: LocationRow;
  path: string;
}

/** The values of a field that takes one or several (paths, URLs), within MAX_SOURCES. */
export function oneOrSeveral(value: string | string[], field: string): string[] {
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) throw invalid(`${field} must name at least one path`);
  if (items.length > MAX_SOURCES) throw invalid(`${field} may name at most ${MAX_SOURCES} paths`);
  return items;
}

/**
 * A location not found under a name holding `:` is most likely the copy grammar (`location:path`) sent
 * to a route that takes `location/path` (docs/api.md, "Addressing a location"): the error says so and
 * shows the value rewritten. Anything else passes unchanged.
 */
function teachSlashForm(err: unknown, value: string, field: string): unknown {
  const colon = value.indexOf(':');
  const slash = value.indexOf('/');
  if (!isFerryError(err, 'not_found') || colon <= 0 || (slash >= 0 && slash < colon)) return err;
  const rewritten = `${value.slice(0, colon)}/${value.slice(colon + 1).replace(/^\/+/, '')}`;
  return notFound(
    `${err.message}; ${field} takes "<location>/<path>" here (the "<location>:<path>" form is for /v1/copy): did you mean "${rewritten}"?`,
  );
}

export class OperationPaths {
  constructor(
    private readonly locations: Locations,
    private readonly patternLimits: PatternLimits,
  ) {}

  /** `<location>/<path>`: the location by label or UUID (docs/api.md, "Addressing a location"), the rest verbatim. */
  async resolve(caller: Caller, value: string, field: string): Promise<Resolved> {
    const slash = value.indexOf('/');
    const location = slash < 0 ? value : value.slice(0, slash);
    const path = slash < 0 ? '' : value.slice(slash + 1);
    if (location === '') throw invalid(`${field} must start with the location: "<location>/<path>"`);
    try {
      const row = await this.locations.resolve(
        caller,
        isUuid(location) ? { id: location } : { name: location },
      );
      return { row, path };
    } catch (err) {
      throw teachSlashForm(err, value, field);
    }
  }

  /** A source or removal path: a file, or a pattern below the bucket on bucket stores. */
  private checkSource(resolved: Resolved, field: string, literal: boolean): void {
    const { path, row } = resolved;
    const pattern = isPattern(path, literal);
    if (path === '' || path.endsWith('/'))
      throw invalid(`${field} must name a file or a pattern, not a folder`);
    if (path.startsWith('/')) throw invalid(`${field} has an empty segment after the location`);
    if (path.split('/').includes('..')) throw invalid(`${field} must not contain a ".." segment`);
    if (pattern) this.checkPattern(path, field);
    if (pattern && hasBuckets(row.provider) && !splitPattern(path).base) {
      throw invalid(`${field}: a pattern must start below the bucket ("bucket/*.txt")`);
    }
    if (!pattern && hasBuckets(row.provider) && !path.includes('/')) {
      throw invalid(`${field} needs a bucket and a key: "<location>/bucket/key"`);
    }
  }

  /** A pattern within the limits of docs/api.md, "Limits" (400 naming the limit otherwise). */
  private checkPattern(path: string, field: string): void {
    try {
      checkPattern(path, this.patternLimits);
    } catch (err) {
      if (isFerryError(err, 'invalid')) throw invalid(`${field}: ${err.message}`);
      throw err;
    }
  }

  /** A source `<location>/<file or pattern>`, checked as move and remove check theirs (share, send). */
  async resolveSource(caller: Caller, value: string, field: string, literal = false): Promise<Resolved> {
    const resolved = await this.resolve(caller, value, field);
    this.checkSource(resolved, field, literal);
    this.checkActive(resolved.row);
    return resolved;
  }

  /** 409 unless the location is active (docs/api.md, "Move, remove, pull"). */
  checkActive(row: LocationRow): void {
    if (row.status !== 'active') throw conflict(`location ${row.label} (${row.id}) is ${row.status}`);
  }

  /**
   * Where a move or pull writes: a file, or a folder (ending with "/") that several sources or a
   * pattern need; `folder` says which.
   */
  async destination(caller: Caller, to: string, several: boolean) {
    const resolved = await this.resolve(caller, to, 'to');
    const folder = resolved.path === '' || resolved.path.endsWith('/');
    if (several && !folder)
      throw invalid('several sources, or a pattern, need a destination folder: "to" must end with "/"');
    if (resolved.path.split('/').includes('..')) throw invalid('to must not contain a ".." segment');
    if (!folder && hasBuckets(resolved.row.provider) && !resolved.path.includes('/')) {
      throw invalid('to needs a bucket and a key, or a folder ending with "/"');
    }
    if (folder && hasBuckets(resolved.row.provider) && resolved.path === '') {
      throw invalid('to needs a bucket: "<location>/bucket/"');
    }
    this.checkActive(resolved.row);
    return { location_id: resolved.row.id, path: resolved.path, folder };
  }

  /**
   * A filter on a move or remove (docs/api.md, "Filters"): checked, and only with a pattern among the
   * sources, which is what it narrows.
   */
  checkFilter(input: FilterInput | undefined, refs: ObjectRef[]): FilterSpec | undefined {
    if (input === undefined) return undefined;
    const spec = parseFilter(input, this.patternLimits);
    if (!refs.some((ref) => isPattern(ref.path, ref.literal)))
      throw invalid('filter applies only to patterned sources ("<location>/bucket/dir/**")');
    return spec;
  }

  /**
   * A move's sources and destination, checked together: not onto itself, and no two plain sources that
   * would land on one name.
   */
  async movePaths(caller: Caller, from: string | string[], to: string, literal: boolean) {
    const sources: ObjectRef[] = [];
    const items = oneOrSeveral(from, 'from');
    // Up to MAX_SOURCES checks, each compiling a pattern: the event loop runs between slices of them.
    const pause = slicer();
    for (const item of items) {
      await pause();
      const resolved = await this.resolve(caller, item, 'from');
      this.checkSource(resolved, 'from', literal);
      this.checkActive(resolved.row);
      sources.push({
        location_id: resolved.row.id,
        path: resolved.path,
        ...(literal ? { literal: true } : {}),
      });
    }
    const several = sources.length > 1 || sources.some((s) => isPattern(s.path, s.literal));
    const destination = await this.destination(caller, to, several);
    for (const s of sources) {
      if (s.location_id === destination.location_id && !destination.folder && s.path === destination.path) {
        throw invalid('a move onto itself is not allowed');
      }
    }
    // Plain sources land in the folder under their own names: two with one name would land on one
    // destination, and the first moved would be overwritten by the second, its source already gone.
    const named = new Map<string, string>();
    for (const [i, s] of sources.entries()) {
      if (!destination.folder || isPattern(s.path, s.literal)) continue;
      const name = s.path.slice(s.path.lastIndexOf('/') + 1);
      const earlier = named.get(name);
      if (earlier !== undefined) {
        throw invalid(
          `"from" names two files called "${name}" (${earlier} and ${items[i]}): both would land on ${to}${name}; move them in two requests or to two folders`,
        );
      }
      named.set(name, items[i] as string);
    }
    return { sources, destination };
  }

  /** A remove's paths, each a file or a pattern (its location's state is the caller's to check). */
  async removalPaths(caller: Caller, path: string | string[], literal: boolean): Promise<Resolved[]> {
    const out: Resolved[] = [];
    const pause = slicer();
    for (const item of oneOrSeveral(path, 'path')) {
      await pause();
      const resolved = await this.resolve(caller, item, 'path');
      this.checkSource(resolved, 'path', literal);
      out.push(resolved);
    }
    return out;
  }
}
