// The glob dialect of source paths (docs/api.md, "Move, remove, pull"), parsed once into a small
// nondeterministic automaton and matched by stepping every live state at once over the name. A match
// costs at most (characters of the name) × (states of the automaton), whatever the pattern: there is
// no backtracking, so nested stars cannot take exponential time as they do in a regular expression.
// The automaton has about one state per character of the pattern; only a brace range adds states, at
// most its values × their digits, and the alternatives limit bounds that (docs/api.md, "Limits").
//
// The dialect (the header of patterns.ts says when a path is a pattern at all):
// - `*` is any run of characters, none included, other than `/`. A run of stars is one star.
// - `**` as a whole segment (between slashes, or at either end) crosses folders: `a/**/b` matches
//   `a/b`, `a/x/b` and `a/x/y/b`; a trailing `/**` matches everything below. Elsewhere it is `*`.
// - `?` is one character other than `/` (a character is a Unicode code point).
// - `[…]` one character of a class: single characters and ranges `a-z`; `[!…]` or `[^…]` negates;
//   a `]` first in the class is literal; `\` escapes inside it too. A class never matches `/`; a `[`
//   with no closing `]` before the next `/` is a literal `[`.
// - `{a,b}` alternatives (nested, empty ones allowed, `/` allowed inside); `{1..5}`, `{05..10}` (zero
//   padded), `{10..1..3}` (a step) and `{a..e}` ranges. A brace with neither a top-level comma nor a
//   range inside is literal text.
// - `\` makes the next character literal; a trailing `\` is itself. Every other character is literal,
//   dots at the start of a name and the `.` and `..` names included (object keys, not file paths).
import { invalid } from '../errors.js';

export interface PatternLimits {
  /** Characters in the whole pattern. */
  maxLength: number;
  /** `*`, `**`, `?` and `[…]` in the pattern, each counted once. */
  maxWildcards: number;
  /** Brace alternatives in all, a range counting each of its values. */
  maxAlternatives: number;
}

/** The defaults of FERRY_PATTERN_MAX_LENGTH, _MAX_WILDCARDS and _MAX_ALTERNATIVES (README, "Settings"). */
export const DEFAULT_PATTERN_LIMITS: PatternLimits = {
  maxLength: 1024,
  maxWildcards: 32,
  maxAlternatives: 256,
};

/**
 * The most the settings may be raised to. Work queued before a restart is compiled under these, not
 * under the settings of the process that runs it, so lowering a setting never fails accepted work,
 * and a match still costs a bounded amount.
 */
export const PATTERN_LIMIT_CEILINGS: PatternLimits = {
  maxLength: 8192,
  maxWildcards: 1024,
  maxAlternatives: 4096,
};

/** The settings each limit is named by in a refusal. */
const SETTING: Record<keyof PatternLimits, string> = {
  maxLength: 'FERRY_PATTERN_MAX_LENGTH',
  maxWildcards: 'FERRY_PATTERN_MAX_WILDCARDS',
  maxAlternatives: 'FERRY_PATTERN_MAX_ALTERNATIVES',
};

/** Refuses a pattern past `limit` with a message naming the limit and its setting. */
function overLimit(limits: PatternLimits, limit: keyof PatternLimits, what: string): never {
  throw invalid(`a pattern may have at most ${limits[limit]} ${what} (${SETTING[limit]}); this one has more`);
}

/** Whether `pattern` is within `limits` in length (the cheap check, before anything is parsed). */
export function checkPatternLength(pattern: string, limits: PatternLimits): void {
  if (pattern.length > limits.maxLength) overLimit(limits, 'maxLength', 'characters');
}

// ---- Parsing: pattern text → a tree ----

type Item =
  | { kind: 'char'; cp: number }
  | { kind: 'any' }
  | { kind: 'star' }
  /** `**` as a whole segment: with `slash`, it took the `/` after it and matches "" or "…/"; else ".*". */
  | { kind: 'globstar'; slash: boolean }
  | { kind: 'class'; negated: boolean; ranges: number[] }
  | { kind: 'alt'; branches: Item[][] };

const SLASH = 0x2f;
/**
 * How deep alternatives may nest: parsing and building recurse once per level. A fixed bound, not a
 * setting: no pattern a person writes comes near it, and it keeps the recursion far from the stack's end.
 */
export const MAX_BRACE_DEPTH = 32;
/** Numeric range endpoints longer than this are literal text (they stay exact as JS numbers). */
const RANGE_DIGITS = 15;

class Parser {
  /** The pattern's code points. */
  private readonly cs: string[];
  /** escaped[i]: the character at i follows an unescaped `\`. */
  private readonly escaped: boolean[];
  /** close[i]: for a `{` at i, the index of its `}`, or -1. */
  private readonly close: Int32Array;
  /** stop[i]: the first unescaped `]` or any `/` at or after i (cs.length when none). */
  private readonly stop: Int32Array;
  wildcards = 0;
  alternatives = 0;
  /** Alternatives open around the part being parsed. */
  private depth = 0;

  constructor(
    pattern: string,
    private readonly limits: PatternLimits,
  ) {
    const cs = Array.from(pattern);
    const n = cs.length;
    this.cs = cs;
    this.escaped = new Array<boolean>(n).fill(false);
    for (let i = 0; i < n; i++) {
      if (cs[i] === '\\' && i + 1 < n) this.escaped[++i] = true;
    }
    this.stop = new Int32Array(n + 1).fill(n);
    for (let i = n - 1; i >= 0; i--) {
      const c = cs[i];
      this.stop[i] = c === '/' || (c === ']' && !this.escaped[i]) ? i : (this.stop[i + 1] as number);
    }
    // Braces pair up in one pass; a class is skipped whole, so a `}` or `,` inside one is its own.
    this.close = new Int32Array(n).fill(-1);
    const open: number[] = [];
    for (let i = 0; i < n; i++) {
      if (this.escaped[i] || cs[i] === '\\') continue;
      if (cs[i] === '[') {
        const end = this.classEnd(i);
        if (end >= 0) i = end;
      } else if (cs[i] === '{') {
        open.push(i);
      } else if (cs[i] === '}' && open.length > 0) {
        this.close[open.pop() as number] = i;
      }
    }
  }

  private is(i: number, c: string): boolean {
    return this.cs[i] === c && !this.escaped[i];
  }

  /** Index of the `]` closing the class opened at `start`, or -1 (none before the next `/`). */
  private classEnd(start: number): number {
    let i = start + 1;
    if (this.is(i, '!') || this.is(i, '^')) i++;
    if (this.is(i, ']')) i++;
    if (i >= this.cs.length) return -1;
    const end = this.stop[i] as number;
    return end < this.cs.length && this.cs[end] === ']' ? end : -1;
  }

  parse(): Item[] {
    return this.sequence(0, this.cs.length, true, true);
  }

  /**
   * The items of cs[from, to). `before` and `after` say whether a segment boundary (a `/`, or an end
   * of the whole pattern) lies just outside the range, which decides whether a `**` is a globstar.
   */
  private sequence(from: number, to: number, before: boolean, after: boolean): Item[] {
    const { cs } = this;
    const items: Item[] = [];
    const atBoundary = () => {
      const last = items[items.length - 1];
      if (last === undefined) return before;
      return (last.kind === 'char' && last.cp === SLASH) || (last.kind === 'globstar' && last.slash);
    };
    let i = from;
    while (i < to) {
      const c = cs[i] as string;
      if (this.escaped[i]) {
        items.push(char(c));
        i++;
      } else if (c === '\\') {
        // Escapes a next character (taken above as escaped), or stands for itself at the very end.
        if (i + 1 >= cs.length) items.push(char(c));
        i++;
      } else if (c === '*') {
        let j = i;
        while (j < to && this.is(j, '*')) j++;
        const boundaryAfter = j === to ? after : this.is(j, '/');
        this.wildcard();
        if (j - i === 2 && atBoundary() && boundaryAfter) {
          const slash = j < to;
          items.push({ kind: 'globstar', slash });
          i = slash ? j + 1 : j;
        } else {
          items.push({ kind: 'star' });
          i = j;
        }
      } else if (c === '?') {
        this.wildcard();
        items.push({ kind: 'any' });
        i++;
      } else if (c === '[') {
        const end = this.classEnd(i);
        if (end < 0 || end >= to) {
          items.push(char(c));
          i++;
          continue;
        }
        this.wildcard();
        items.push(this.charClass(i, end));
        i = end + 1;
      } else if (c === '{') {
        const end = this.close[i] as number;
        const alt = end >= 0 && end < to ? this.braces(i, end, atBoundary(), to, after) : undefined;
        if (alt === undefined) {
          items.push(char(c));
          i++;
        } else {
          items.push(alt);
          i = end + 1;
        }
      } else {
        items.push(char(c));
        i++;
      }
    }
    return items;
  }

  private wildcard(): void {
    if (++this.wildcards > this.limits.maxWildcards) overLimit(this.limits, 'maxWildcards', 'wildcards');
  }

  private addAlternatives(count: number): void {
    this.alternatives += count;
    if (this.alternatives > this.limits.maxAlternatives) {
      overLimit(this.limits, 'maxAlternatives', 'brace alternatives');
    }
  }

  private charClass(start: number, end: number): Item {
    const negated = this.is(start + 1, '!') || this.is(start + 1, '^');
    // The `\` of an escape is not a member; the escaped character is, even a `-` (never a range then).
    const ranges: number[] = [];
    const members: { cp: number; literal: boolean }[] = [];
    for (let k = start + 1 + (negated ? 1 : 0); k < end; k++) {
      if (this.is(k, '\\')) continue;
      members.push({
        cp: (this.cs[k] as string).codePointAt(0) as number,
        literal: this.escaped[k] === true,
      });
    }
    for (let k = 0; k < members.length; k++) {
      const m = members[k] as { cp: number; literal: boolean };
      const dash = members[k + 1];
      const hi = members[k + 2];
      if (dash !== undefined && hi !== undefined && dash.cp === 0x2d && !dash.literal) {
        // A reversed range (`z-a`) matches nothing.
        ranges.push(m.cp, hi.cp);
        k += 2;
      } else {
        ranges.push(m.cp, m.cp);
      }
    }
    return { kind: 'class', negated, ranges };
  }

  /** The brace at `start` closed at `end`: alternatives or a range, or undefined when it is literal. */
  private braces(start: number, end: number, before: boolean, to: number, after: boolean): Item | undefined {
    const boundaryAfter = end + 1 === to ? after : this.is(end + 1, '/');
    // Top-level commas: nested braces and classes are skipped whole.
    const commas: number[] = [];
    for (let i = start + 1; i < end; i++) {
      if (this.escaped[i]) continue;
      const c = this.cs[i];
      if (c === '{' && (this.close[i] as number) >= 0) i = this.close[i] as number;
      else if (c === '[') {
        const e = this.classEnd(i);
        if (e >= 0) i = e;
      } else if (c === ',') commas.push(i);
    }
    if (commas.length > 0) {
      this.addAlternatives(commas.length + 1);
      if (++this.depth > MAX_BRACE_DEPTH) {
        throw invalid(`a pattern's braces may nest at most ${MAX_BRACE_DEPTH} deep`);
      }
      const bounds = [start, ...commas, end];
      const branches: Item[][] = [];
      for (let k = 0; k + 1 < bounds.length; k++) {
        branches.push(
          this.sequence((bounds[k] as number) + 1, bounds[k + 1] as number, before, boundaryAfter),
        );
      }
      this.depth--;
      return { kind: 'alt', branches };
    }
    // Three numbers of at most RANGE_DIGITS + 1 characters and two `..`: anything longer is no range
    // (and is not copied out, so that nested literal braces cost nothing more than their characters).
    if (end - start - 1 > 3 * (RANGE_DIGITS + 1) + 4) return undefined;
    const values = this.range(this.cs.slice(start + 1, end).join(''));
    if (values === undefined) return undefined;
    return { kind: 'alt', branches: values.map((v) => Array.from(v, char)) };
  }

  /** The values of a range body (`1..5`, `01..10`, `10..1..3`, `a..e`), or undefined when it is none. */
  private range(body: string): string[] | undefined {
    const numeric = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(body);
    const letters = numeric ? null : /^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$/.exec(body);
    const match = numeric ?? letters;
    if (!match) return undefined;
    const [, a = '', b = '', stepText] = match;
    if (a.length > RANGE_DIGITS + 1 || b.length > RANGE_DIGITS + 1) return undefined;
    if (stepText !== undefined && stepText.length > RANGE_DIGITS + 1) return undefined;
    const step = Math.max(1, Math.abs(Number(stepText ?? 1)));
    const first = numeric ? Number(a) : a.codePointAt(0);
    const last = numeric ? Number(b) : b.codePointAt(0);
    if (first === undefined || last === undefined) return undefined;
    const count = Math.floor(Math.abs(last - first) / step) + 1;
    this.addAlternatives(count);
    const direction = last >= first ? 1 : -1;
    // Zero padding, as in bash: when either end is written with a leading zero, every value is as wide.
    const padded = numeric !== null && (/^-?0\d/.test(a) || /^-?0\d/.test(b));
    const width = Math.max(a.length, b.length);
    const values: string[] = [];
    for (let k = 0; k < count; k++) {
      const v = first + direction * step * k;
      if (!numeric) values.push(String.fromCodePoint(v));
      else if (!padded) values.push(String(v));
      else {
        const sign = v < 0 ? '-' : '';
        values.push(sign + String(Math.abs(v)).padStart(width - sign.length, '0'));
      }
    }
    return values;
  }
}

function char(c: string): Item {
  return { kind: 'char', cp: c.codePointAt(0) as number };
}

// ---- The automaton ----

const CHAR = 0;
const ANY = 1;
const CLASS = 2;
/** Loops on any character but `/`; an empty move to `out`. */
const STAR = 3;
/** Loops on any character; an empty move to `out`. */
const DOTSTAR = 4;
/** Loops on any character, and moves to `out` on a `/`. */
const TO_SLASH = 5;
/** Empty moves to each of its branches. */
const SPLIT = 6;
const MATCH = 7;

/** The automaton under construction; its states are numbered in the order they are added. */
class Builder {
  readonly kind: number[] = [];
  readonly cp: number[] = [];
  readonly out: number[] = [];
  readonly branches: (number[] | undefined)[] = [];
  readonly ranges: (number[] | undefined)[] = [];
  readonly negated: boolean[] = [];

  private add(kind: number, out: number, cp = -1): number {
    this.kind.push(kind);
    this.cp.push(cp);
    this.out.push(out);
    this.branches.push(undefined);
    this.ranges.push(undefined);
    this.negated.push(false);
    return this.kind.length - 1;
  }

  match(): number {
    return this.add(MATCH, -1);
  }

  private split(branches: number[]): number {
    const s = this.add(SPLIT, -1);
    this.branches[s] = branches;
    return s;
  }

  /** The states for `items` followed by `next`; returns the first. */
  sequence(items: Item[], next: number): number {
    for (let k = items.length - 1; k >= 0; k--) next = this.item(items[k] as Item, next);
    return next;
  }

  private item(item: Item, next: number): number {
    switch (item.kind) {
      case 'char':
        return this.add(CHAR, next, item.cp);
      case 'any':
        return this.add(ANY, next);
      case 'star':
        return this.add(STAR, next);
      case 'class': {
        const s = this.add(CLASS, next);
        this.ranges[s] = item.ranges;
        this.negated[s] = item.negated;
        return s;
      }
      case 'globstar':
        if (!item.slash) return this.add(DOTSTAR, next);
        return this.split([next, this.add(TO_SLASH, next)]);
      case 'alt':
        return this.split(item.branches.map((b) => this.sequence(b, next)));
    }
  }
}

/**
 * A compiled glob. `test` decides a path at once; `begin` and `advance` decide it in slices of bounded
 * work, so that a caller can let the event loop run between them however long the path and pattern.
 */
export class GlobMatcher {
  private readonly kind: Uint8Array;
  private readonly cp: Int32Array;
  private readonly out: Int32Array;
  /** Branches of SPLIT state s: edges[edgeStart[s] .. edgeStart[s + 1]). */
  private readonly edgeStart: Int32Array;
  private readonly edges: Int32Array;
  private readonly ranges: (number[] | undefined)[];
  private readonly negated: boolean[];
  private readonly start: number;
  /** How many states the automaton has: the most work one character of a path can cost. */
  readonly size: number;
  // The live states before and after the current character, a mark per state (the step it was last
  // added in) and the stack of empty moves: reused by every match, which is why one matcher decides
  // one path at a time.
  private current: Int32Array;
  private next: Int32Array;
  private live = 0;
  private readonly marks: Int32Array;
  private readonly stack: Int32Array;
  private step = 0;
  private path = '';
  private position = 0;
  /** State steps spent on the path given to `begin`: never more than its length × `size`. */
  work = 0;

  constructor(b: Builder, start: number) {
    const n = b.kind.length;
    this.size = n;
    this.kind = Uint8Array.from(b.kind);
    this.cp = Int32Array.from(b.cp);
    this.out = Int32Array.from(b.out);
    this.edgeStart = new Int32Array(n + 1);
    const edges: number[] = [];
    for (let s = 0; s < n; s++) {
      this.edgeStart[s] = edges.length;
      edges.push(...(b.branches[s] ?? []));
    }
    this.edgeStart[n] = edges.length;
    this.edges = Int32Array.from(edges);
    this.ranges = b.ranges;
    this.negated = b.negated;
    this.start = start;
    this.current = new Int32Array(n);
    this.next = new Int32Array(n);
    this.marks = new Int32Array(n).fill(-1);
    // Every push follows an edge (a branch, or a star's way out), so the stack holds at most that many.
    this.stack = new Int32Array(edges.length + n + 1);
  }

  /** Whether `path` matches, decided at once (at most path length × size steps). */
  test(path: string): boolean {
    this.begin(path);
    this.advance(Number.POSITIVE_INFINITY);
    return this.result();
  }

  /** Starts deciding `path`. */
  begin(path: string): void {
    this.path = path;
    this.position = 0;
    this.work = 0;
    this.nextStep();
    this.live = this.close(this.start, this.current, 0);
  }

  /**
   * Reads characters of the path until it is decided or about `work` state steps are spent; true when
   * decided (then `result()` says how).
   */
  advance(work: number): boolean {
    const { path, kind, cp: cps, out } = this;
    let spent = 0;
    while (this.position < path.length && this.live > 0) {
      if (spent >= work) return false;
      const c = path.codePointAt(this.position) as number;
      this.position += c > 0xffff ? 2 : 1;
      this.nextStep();
      const current = this.current;
      const next = this.next;
      const live = this.live;
      let count = 0;
      for (let k = 0; k < live; k++) {
        const s = current[k] as number;
        switch (kind[s]) {
          case CHAR:
            if (c === cps[s]) count = this.close(out[s] as number, next, count);
            break;
          case ANY:
            if (c !== SLASH) count = this.close(out[s] as number, next, count);
            break;
          case CLASS:
            if (c !== SLASH && inClass(this.ranges[s] as number[], c) !== this.negated[s]) {
              count = this.close(out[s] as number, next, count);
            }
            break;
          case STAR:
            if (c !== SLASH) count = this.close(s, next, count);
            break;
          case DOTSTAR:
            count = this.close(s, next, count);
            break;
          case TO_SLASH:
            count = this.close(s, next, count);
            if (c === SLASH) count = this.close(out[s] as number, next, count);
            break;
        }
      }
      spent += live;
      this.work += live;
      this.current = next;
      this.next = current;
      this.live = count;
    }
    return true;
  }

  /** Whether the path given to `begin` matches; only once `advance` answered true. */
  result(): boolean {
    if (this.position < this.path.length) return false;
    for (let k = 0; k < this.live; k++) if (this.kind[this.current[k] as number] === MATCH) return true;
    return false;
  }

  private nextStep(): void {
    // A wrapped counter could meet an old mark: start the marks over instead.
    if (++this.step === 0x7fffffff) {
      this.marks.fill(-1);
      this.step = 0;
    }
  }

  /** Adds `first` and every state its empty moves reach to `list` from `length`; the new length. */
  private close(first: number, list: Int32Array, length: number): number {
    const { marks, stack, kind, out, edges, edgeStart, step } = this;
    if (marks[first] === step) return length;
    let top = 0;
    stack[top++] = first;
    while (top > 0) {
      const s = stack[--top] as number;
      if (marks[s] === step) continue;
      marks[s] = step;
      const k = kind[s];
      if (k === SPLIT) {
        for (let e = edgeStart[s] as number; e < (edgeStart[s + 1] as number); e++) {
          const o = edges[e] as number;
          if (marks[o] !== step) stack[top++] = o;
        }
        continue;
      }
      list[length++] = s;
      if (k === STAR || k === DOTSTAR) {
        const o = out[s] as number;
        if (marks[o] !== step) stack[top++] = o;
      }
    }
    return length;
  }
}

/**
 * Compiles `glob` (the part of a pattern below its literal base) into a matcher of location-relative
 * paths. Throws `invalid` naming the limit when the glob is past one of `limits`.
 */
export function compileGlob(glob: string, limits: PatternLimits = PATTERN_LIMIT_CEILINGS): GlobMatcher {
  checkPatternLength(glob, limits);
  const items = new Parser(glob, limits).parse();
  const builder = new Builder();
  const start = builder.sequence(items, builder.match());
  return new GlobMatcher(builder, start);
}

function inClass(ranges: number[], cp: number): boolean {
  for (let k = 0; k < ranges.length; k += 2) {
    if (cp >= (ranges[k] as number) && cp <= (ranges[k + 1] as number)) return true;
  }
  return false;
}
