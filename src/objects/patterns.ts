// Glob patterns in source paths (docs/api.md, "Move, remove, pull"): `*`, `**`, `?`, `[…]` and
// `{a,b}`, matched against the location-relative path by the automaton of glob.ts, whose header gives
// the dialect exactly. Its cost is bounded (docs/api.md, "Limits"): a match is linear in the name's
// length times the pattern's, and expansion lets the event loop run every few milliseconds however
// long the listing, the names or the pattern.
//
// - A path is a pattern when it holds an unescaped `*`, `?`, `[` or `{`. Any other path is a plain
//   path, used verbatim as exact bytes (docs/api.md, "Copy"), backslashes included.
// - `*` matches names that begin with a dot. Object stores have no hidden files; a `.env` or
//   `.gitkeep` is as much the caller's object as any other, and a remove of `dir/*` that quietly kept
//   them would surprise. (rclone's filters treat dots alike too.)
// - Inside a pattern a backslash makes the next character literal (`\*`, `\\`). Every other character
//   is literal: `(`, `|`, `+`, `@`, `!` outside a class, as file names hold them.
// - A name containing a glob character can be named by a pattern that brackets it: `a[*].txt`.
// - A body with `"literal": true` (docs/api.md, "Exact names") makes every path in it exact bytes:
//   `literal` below, carried into the queued spec so the worker expands nothing either.
//
// expandSources lists only the deepest folder the pattern fixes (its literal leading segments), and
// recursively only when the rest needs it (it has a `/` or a `**`), yielding matching files as the
// listing streams them, in listing order. On bucket stores the bucket segment must be literal.
import { FerryError } from '../errors.js';
import type { Entry, Store } from '../stores/contract.js';
import { slicer } from '../util/slicer.js';
import { type Filter, listFiltered } from './filter.js';
import { checkPatternLength, compileGlob, type PatternLimits } from './glob.js';

const GLOB_CHARS = new Set(['*', '?', '[', '{']);

/**
 * True when `path` holds an unescaped glob character (`*`, `?`, `[`, `{`) and is not marked literal
 * (docs/api.md, "Exact names": a literal path is never a pattern).
 */
export function isPattern(path: string, literal?: boolean): boolean {
  if (literal === true) return false;
  for (let i = 0; i < path.length; i++) {
    const c = path[i] as string;
    if (c === '\\') i++;
    else if (GLOB_CHARS.has(c)) return true;
  }
  return false;
}

/** A pattern split into the literal folder it starts from and the glob below it. */
export interface SplitPattern {
  /** Literal leading segments, unescaped ("" for the root). */
  base: string;
  /** The rest, from the first segment holding a glob character, as written (escapes kept). */
  glob: string;
  /** Whether the rest can match below the first level (it has a `/` or a `**`). */
  recursive: boolean;
}

export function splitPattern(pattern: string): SplitPattern {
  const segments = pattern.split('/');
  const first = segments.findIndex((segment) => isPattern(segment));
  if (first < 0) throw new FerryError('internal', `"${pattern}" is not a pattern`);
  const rest = segments.slice(first).join('/');
  return {
    base: segments.slice(0, first).map(unescapeSegment).join('/'),
    glob: rest,
    recursive: segments.length - first > 1 || rest.includes('**'),
  };
}

/**
 * Refuses (invalid, naming the limit) a pattern past `limits` in length, wildcards or brace
 * alternatives; what move, remove, share and send check before accepting one.
 */
export function checkPattern(pattern: string, limits: PatternLimits): void {
  checkPatternLength(pattern, limits);
  compileGlob(splitPattern(pattern).glob, limits);
}

/** State steps of the matcher between looks at the clock (well under a millisecond of work). */
const WORK_PER_LOOK = 20_000;

/**
 * The objects a source path names: a plain (or literal) path is that one object (stat; not_found when missing);
 * a pattern lists its base folder and yields the matching files (never folders), streaming. With a
 * filter (docs/api.md, "Filters"), only the files that pass it, relative to the pattern's base (a plain
 * path: its name), listed as filter.ts lists.
 */
export async function* expandSources(
  store: Store,
  path: string,
  signal?: AbortSignal,
  literal?: boolean,
  filter?: Filter,
): AsyncIterable<Entry> {
  const opts = signal === undefined ? {} : { signal };
  if (!isPattern(path, literal)) {
    const info = await store.stat(path, opts);
    if (filter !== undefined && !(await filter.passes(lastSegment(info.path), info))) return;
    yield {
      name: lastSegment(info.path),
      path: info.path,
      size: info.size,
      isDir: false,
      ...(info.mimeType === undefined ? {} : { mimeType: info.mimeType }),
      ...(info.modTime === undefined ? {} : { modTime: info.modTime }),
      ...(info.etag === undefined ? {} : { etag: info.etag }),
    };
    return;
  }
  const { base, glob, recursive } = splitPattern(path);
  if (store.features.bucketListing && base === '') {
    throw new FerryError(
      'invalid',
      `"${path}": a pattern cannot stand in the bucket or container name; name the bucket literally`,
    );
  }
  // Compiled under the ceilings, not the settings: the pattern was checked when it was accepted, maybe
  // by a process with other settings, and the work of a match is bounded either way.
  const matcher = compileGlob(glob);
  const prefix = base === '' ? '' : `${base}/`;
  // A page of a listing arrives at once and its entries follow each other without the event loop
  // running: every slice of matching, it is let run before the next entry (or the rest of a name).
  const pause = slicer();
  for await (const entry of listFiltered(store, base, { recursive, filter, signal })) {
    await pause();
    if (entry.isDir || !entry.path.startsWith(prefix)) continue;
    matcher.begin(entry.path.slice(prefix.length));
    while (!matcher.advance(WORK_PER_LOOK)) await pause();
    if (matcher.result()) yield entry;
  }
}

function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** A literal segment of a pattern with its escapes resolved. */
function unescapeSegment(segment: string): string {
  return segment.replace(/\\(.)/gs, '$1');
}
