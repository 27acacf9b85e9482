// Glob patterns in source paths (docs/api.md, "Move, remove, pull"): `*`, `**`, `?`,
// `[…]` and `{a,b}`, matched with picomatch against the location-relative path.
//
// The dialect, exactly:
// - A path is a pattern when it holds an unescaped `*`, `?`, `[` or `{`. Any other path is a plain
//   path, used verbatim as exact bytes (docs/api.md, "Copy"), backslashes included.
// - `*` and `?` never cross a `/`; `**` as a whole segment crosses any number of folders (none too).
//   `[…]` is a character class (`[!…]` and `[^…]` negate it), `{a,b}` alternatives, `{1..3}` a range.
// - `*` matches names that begin with a dot. Object stores have no hidden files; a `.env` or
//   `.gitkeep` is as much the caller's object as any other, and a remove of `dir/*` that quietly kept
//   them would surprise. (rclone's filters treat dots alike too.)
// - Inside a pattern a backslash makes the next character literal (`\*`, `\\`). Every other character
//   is literal: picomatch's extglobs (`+(…)`, `@(…)`, `!(…)`), a leading `!` and regex-looking
//   characters like `(`, `|`, `+` are escaped before picomatch sees them, as file names hold them.
// - A name containing a glob character can be named by a pattern that brackets it: `a[*].txt`.
//
// expandSources lists only the deepest folder the pattern fixes (its literal leading segments), and
// recursively only when the rest needs it (it has a `/` or a `**`), yielding matching files as the
// listing streams them, in listing order. On bucket stores the bucket segment must be literal.
import picomatch from 'picomatch';
import { FerryError } from '../errors.js';
import type { Entry, Store } from '../stores/contract.js';

const GLOB_CHARS = new Set(['*', '?', '[', '{']);

/** True when `path` holds an unescaped glob character (`*`, `?`, `[`, `{`). */
export function isPattern(path: string): boolean {
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
  /** The rest, from the first segment holding a glob character, in picomatch syntax. */
  glob: string;
  /** Whether the rest can match below the first level (it has a `/` or a `**`). */
  recursive: boolean;
}

export function splitPattern(pattern: string): SplitPattern {
  const segments = pattern.split('/');
  const first = segments.findIndex(isPattern);
  if (first < 0) throw new FerryError('internal', `"${pattern}" is not a pattern`);
  const rest = segments.slice(first).join('/');
  return {
    base: segments.slice(0, first).map(unescapeSegment).join('/'),
    glob: toPicomatch(rest),
    recursive: segments.length - first > 1 || rest.includes('**'),
  };
}

/** A compiled matcher for the part of a path below the pattern's base. */
export function compileGlob(glob: string): (relative: string) => boolean {
  return picomatch(glob, { dot: true, strictSlashes: true });
}

/**
 * The objects a source path names: a plain path is that one object (stat; not_found when missing);
 * a pattern lists its base folder and yields the matching files (never folders), streaming.
 */
export async function* expandSources(store: Store, path: string, signal?: AbortSignal): AsyncIterable<Entry> {
  const opts = signal === undefined ? {} : { signal };
  if (!isPattern(path)) {
    const info = await store.stat(path, opts);
    yield {
      name: lastSegment(info.path),
      path: info.path,
      size: info.size,
      isDir: false,
      ...(info.mimeType === undefined ? {} : { mimeType: info.mimeType }),
      ...(info.modTime === undefined ? {} : { modTime: info.modTime }),
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
  const matches = compileGlob(glob);
  const prefix = base === '' ? '' : `${base}/`;
  for await (const entry of store.list(base, { recursive, ...opts })) {
    if (entry.isDir || !entry.path.startsWith(prefix)) continue;
    if (matches(entry.path.slice(prefix.length))) yield entry;
  }
}

function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** A literal segment of a pattern with its escapes resolved. */
function unescapeSegment(segment: string): string {
  return segment.replace(/\\(.)/gs, '$1');
}

/** Characters picomatch would read as regex or extglob syntax; in our dialect they are literal. */
const LITERAL_PUNCTUATION = new Set(['(', ')', '|', '+', '@', '!']);

/**
 * Rewrites a glob of our dialect into picomatch syntax: escapes pass through (an escaped letter or
 * digit becomes itself, since picomatch would read `\d` as a regex class), `[!` becomes `[^`, a `[`
 * without a closing `]` is literal, and punctuation picomatch would interpret is escaped.
 */
export function toPicomatch(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '\\') {
      const next = glob[i + 1];
      i++;
      if (next === undefined) out += '\\\\';
      else out += /[\p{L}\p{N}]/u.test(next) ? next : `\\${next}`;
    } else if (c === '[') {
      const end = classEnd(glob, i);
      if (end < 0) {
        out += '\\[';
        continue;
      }
      let body = glob.slice(i + 1, end);
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      out += `[${body}]`;
      i = end;
    } else if (LITERAL_PUNCTUATION.has(c)) {
      out += `\\${c}`;
    } else {
      out += c;
    }
  }
  return out;
}

/** Index of the `]` closing the class opened at `start`, or -1. A `]` first in the class is literal. */
function classEnd(glob: string, start: number): number {
  let i = start + 1;
  if (glob[i] === '!' || glob[i] === '^') i++;
  if (glob[i] === ']') i++;
  for (; i < glob.length; i++) {
    if (glob[i] === '/') return -1;
    if (glob[i] === ']') return i;
  }
  return -1;
}
