// The pattern matcher (src/objects/glob.ts) as a unit: the dialect case by case, the limits and their
// messages, the worst patterns (their cost is bounded by the name's length × the automaton's size,
// where the regular expression ferry used before took seconds to minutes), and a seeded comparison
// with picomatch, the library ferry matched with before, on inputs where the two dialects agree.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import picomatch from 'picomatch';
import { ConfigError, loadConfig } from '../../src/config.js';
import { isFerryError } from '../../src/errors.js';
import {
  compileGlob,
  DEFAULT_PATTERN_LIMITS,
  type GlobMatcher,
  PATTERN_LIMIT_CEILINGS,
  type PatternLimits,
} from '../../src/objects/glob.js';
import { checkPattern } from '../../src/objects/patterns.js';

describe('the dialect', () => {
  const cases: [pattern: string, yes: string[], no: string[]][] = [
    ['*.txt', ['a.txt', '.txt', '.hidden.txt', 'x.y.txt'], ['a/b.txt', 'a.txt.gz']],
    ['*', ['a', '.env', '.', '..'], ['a/b']],
    ['a*b*c', ['abc', 'aXbYc', 'abbbc'], ['ab/c', 'acb']],
    ['a/*/c', ['a/b/c', 'a//c'], ['a/b/x/c']],
    ['a***b', ['ab', 'axxb'], ['a/b', 'ax/yb']],
    ['file?.txt', ['file1.txt', 'file..txt', 'file😀.txt'], ['file.txt', 'file12.txt', 'file/.txt']],
    ['**', ['a', 'a/b', 'a/b/c', '.x/.y'], []],
    ['**/*.gz', ['x.gz', 'a/x.gz', 'a/b/x.gz'], ['x.gzip', 'a/x.gz/y']],
    ['a/**/b', ['a/b', 'a/x/b', 'a/x/y/b'], ['a/xb', 'ab', 'a/x/y/bc']],
    ['a/**', ['a/x', 'a/x/y', 'a/'], ['a', 'ab/x']],
    ['a**b', ['ab', 'axyb'], ['ax/yb']],
    ['x**/y', ['x/y', 'xz/y'], ['x/z/y']],
    ['[ab]', ['a', 'b'], ['c', 'ab', '/']],
    ['[a-c]x', ['ax', 'bx', 'cx'], ['dx']],
    ['[!a-c]x', ['dx', '.x'], ['ax', '/x']],
    ['[^a]', ['b'], ['a', '/']],
    ['[]a]', [']', 'a'], ['b']],
    ['[!]a]', ['b'], [']', 'a']],
    ['[a-]', ['a', '-'], ['b']],
    ['[a\\]]', ['a', ']'], ['\\']],
    ['[z-a]', [], ['a', 'z', 'm']],
    ['[*]', ['*'], ['a']],
    ['[[]draft]', ['[draft]'], ['d']],
    ['a[b', ['a[b'], ['ab']],
    ['a[b/c]', ['a[b/c]'], ['ab/c]']],
    ['{a,b}.txt', ['a.txt', 'b.txt'], ['c.txt', '{a,b}.txt']],
    ['{a,b/c}/x', ['a/x', 'b/c/x'], ['b/x']],
    ['{a,}x', ['ax', 'x'], ['bx']],
    ['{a,{b,c}}', ['a', 'b', 'c'], ['{b,c}']],
    ['{a,b}*{c,d}', ['ac', 'axxd'], ['ax']],
    ['{[,],x}', [',', 'x'], ['[', ']']],
    ['{a}', ['{a}'], ['a']],
    ['{a*}', ['{a}', '{aXY}'], ['a']],
    ['{a,b', ['{a,b'], ['a']],
    ['a}b,c', ['a}b,c'], []],
    ['{1..3}', ['1', '2', '3'], ['0', '4', '01']],
    ['{3..1}', ['2'], ['4']],
    ['{08..11}', ['08', '09', '10', '11'], ['8', '12']],
    ['{-2..2}', ['-2', '-1', '0', '1', '2'], ['3']],
    ['{1..10..3}', ['1', '4', '7', '10'], ['2', '5']],
    ['{a..e..2}', ['a', 'c', 'e'], ['b']],
    ['{x..z}', ['x', 'y', 'z'], ['w']],
    ['{1..}', ['{1..}'], ['1']],
    ['{1..a}', ['{1..a}'], ['1']],
    ['{a,b}/**', ['a/q/r', 'b/q'], ['c/q']],
    ['{**,x}/y', ['q/y', 'x/y', 'q/r/y'], ['y', 'q/yz']],
    ['a\\*b', ['a*b'], ['axb']],
    ['a\\\\b', ['a\\b'], ['ab']],
    ['a\\', ['a\\'], ['a']],
    ['\\{a,b}', ['{a,b}'], ['a']],
    ['a(1)+!@|b', ['a(1)+!@|b'], ['a1b']],
    ['é 100%*', ['é 100%.txt'], ['e 100%.txt']],
    ['$^.x', ['$^.x'], ['ab.x']],
  ];
  for (const [pattern, yes, no] of cases) {
    test(`${pattern} matches ${JSON.stringify(yes)} and not ${JSON.stringify(no)}`, () => {
      const matcher = compileGlob(pattern);
      for (const name of yes) assert.equal(matcher.test(name), true, `${pattern} should match ${name}`);
      for (const name of no) assert.equal(matcher.test(name), false, `${pattern} should not match ${name}`);
    });
  }
});

describe('limits', () => {
  const limits: PatternLimits = { maxLength: 40, maxWildcards: 3, maxAlternatives: 6 };
  const refusal = (pattern: string) => {
    try {
      checkPattern(pattern, limits);
      return undefined;
    } catch (err) {
      assert.ok(isFerryError(err, 'invalid'), String(err));
      return err.message;
    }
  };

  test('at a limit a pattern is accepted; past it, refused naming the limit and its setting', () => {
    assert.equal(refusal('b/*a*b?c'), undefined);
    assert.equal(
      refusal('b/*a*b?c[de]'),
      'a pattern may have at most 3 wildcards (FERRY_PATTERN_MAX_WILDCARDS); this one has more',
    );
    assert.equal(refusal(`b/${'x'.repeat(37)}*`), undefined);
    assert.equal(
      refusal(`b/${'x'.repeat(38)}*`),
      'a pattern may have at most 40 characters (FERRY_PATTERN_MAX_LENGTH); this one has more',
    );
    assert.equal(refusal('b/{a,b,c}{d,e,f}'), undefined);
    assert.equal(
      refusal('b/{a,b,c}{d,e,f,g}'),
      'a pattern may have at most 6 brace alternatives (FERRY_PATTERN_MAX_ALTERNATIVES); this one has more',
    );
  });

  test('a range counts each of its values, before any is written out', () => {
    assert.equal(refusal('b/{1..6}'), undefined);
    assert.match(refusal('b/{1..7}') ?? '', /at most 6 brace alternatives/);
    assert.match(refusal('b/{1..999999999999999}') ?? '', /at most 6 brace alternatives/);
    assert.equal(refusal('b/{1..99..20}'), undefined);
    // Endpoints too long to be exact numbers are literal text, not a range.
    assert.equal(refusal('b/{1..99999999999999999}'), undefined);
    assert.equal(compileGlob('{1..99999999999999999}').test('{1..99999999999999999}'), true);
  });

  test('braces nest at most 32 deep, whatever the limits; long literal braces cost their characters only', () => {
    const nested = (depth: number) => `${'{a,'.repeat(depth)}b${'}'.repeat(depth)}`;
    assert.equal(compileGlob(nested(32), PATTERN_LIMIT_CEILINGS).test('a'), true);
    assert.throws(
      () => compileGlob(nested(33), PATTERN_LIMIT_CEILINGS),
      (err: unknown) => isFerryError(err, 'invalid') && /nest at most 32 deep/.test(err.message),
    );
    // Thousands deep would overflow the stack of a recursive parser: refused all the same.
    assert.throws(() => compileGlob(nested(2000), PATTERN_LIMIT_CEILINGS), /nest at most 32 deep/);
    const literal = `${'{'.repeat(4000)}*${'}'.repeat(4000)}`;
    const matcher = compileGlob(literal, PATTERN_LIMIT_CEILINGS);
    assert.ok(matcher.size <= literal.length + 1);
    assert.equal(matcher.test(`${'{'.repeat(4000)}x${'}'.repeat(4000)}`), true);
  });

  test('a run of stars, ** and each class count once; the literal base counts towards the length only', () => {
    assert.equal(refusal('b/***/**/[ab]'), undefined);
    assert.match(refusal('b/**/*/[ab]/?') ?? '', /at most 3 wildcards/);
    assert.equal(refusal('b/\\*\\*\\*\\?/[ab]'), undefined);
  });

  test('the settings: 1024 characters, 32 wildcards, 256 brace alternatives unless set, up to the ceilings', () => {
    assert.deepEqual(DEFAULT_PATTERN_LIMITS, { maxLength: 1024, maxWildcards: 32, maxAlternatives: 256 });
    assert.deepEqual(loadConfig({}).patterns, DEFAULT_PATTERN_LIMITS);
    const set = loadConfig({
      FERRY_PATTERN_MAX_LENGTH: '200',
      FERRY_PATTERN_MAX_WILDCARDS: '4',
      FERRY_PATTERN_MAX_ALTERNATIVES: '4096',
    }).patterns;
    assert.deepEqual(set, { maxLength: 200, maxWildcards: 4, maxAlternatives: 4096 });
    for (const [name, value] of [
      ['FERRY_PATTERN_MAX_LENGTH', '8193'],
      ['FERRY_PATTERN_MAX_LENGTH', '0'],
      ['FERRY_PATTERN_MAX_WILDCARDS', '1025'],
      ['FERRY_PATTERN_MAX_ALTERNATIVES', 'many'],
    ] as const) {
      assert.throws(() => loadConfig({ [name]: value }), ConfigError, `${name}=${value}`);
    }
  });
});

/**
 * The names `matcher` matches over `names`, and the most automaton steps one took: the cost of a match,
 * counted rather than timed (a speed belongs to the benches, and a timing to the machine's load).
 */
function workPerName(matcher: GlobMatcher, names: string[]): { hits: number; maxWork: number } {
  let hits = 0;
  let maxWork = 0;
  for (const name of names) {
    if (matcher.test(name)) hits++;
    maxWork = Math.max(maxWork, matcher.work);
  }
  return { hits, maxWork };
}

describe('the worst patterns cost at most name length × automaton size', () => {
  // The pattern of issue 21 (`*a` × n + `*b`) against names of 200 `a`s: a regular expression tries
  // every way of splitting the name between the stars before it gives up.
  const names = Array.from({ length: 100 }, (_, i) => `${'a'.repeat(199)}${i % 10 === 0 ? 'b' : 'a'}`);

  for (const stars of [5, 20, 31]) {
    test(`${stars} × "*a" then "*b" against 200-character names: at most 200 × size steps each`, () => {
      const matcher = compileGlob(`${'*a'.repeat(stars)}*b`, DEFAULT_PATTERN_LIMITS);
      const { hits, maxWork } = workPerName(matcher, names);
      assert.equal(hits, 10);
      assert.ok(maxWork <= 200 * matcher.size, `work ${maxWork}`);
      assert.ok(matcher.size <= 2 * stars + 5, `size ${matcher.size}`);
    });
  }

  test('the longest pattern against a 1024-character name stays within length × size, in slices', () => {
    // One star and 1000 characters: after k `a`s, k states are live at once (the most there can be).
    const matcher = compileGlob(`*${'a'.repeat(1000)}b`, DEFAULT_PATTERN_LIMITS);
    const name = 'a'.repeat(1024);
    assert.equal(matcher.test(name), false);
    assert.ok(matcher.work <= name.length * matcher.size, `work ${matcher.work}`);
    assert.ok(matcher.work > 500_000, 'the case is as bad as it looks');
    // Decided in slices of bounded work: each advance() stops once it spent its budget.
    matcher.begin(name);
    let slices = 0;
    let spent = 0;
    while (!matcher.advance(10_000)) {
      assert.ok(matcher.work - spent < 10_000 + matcher.size);
      spent = matcher.work;
      slices++;
    }
    assert.equal(matcher.result(), false);
    assert.ok(slices > 40, `${slices} slices`);
    assert.equal(compileGlob(`*${'a'.repeat(1000)}`).test(name), true);
  });

  test('many alternatives and ranges grow the automaton by their text only, not their product', () => {
    const braces = compileGlob('{a,b}'.repeat(40), PATTERN_LIMIT_CEILINGS);
    assert.ok(braces.size < 40 * 5, `size ${braces.size}`);
    assert.equal(braces.test('ab'.repeat(20)), true);
    // Four ranges of 64 values of at most two digits: a few hundred states, where their product would
    // be 64^4; a match steps them at most once per character.
    const ranges = compileGlob('*{1..64}*{1..64}*{1..64}*{1..64}', DEFAULT_PATTERN_LIMITS);
    assert.ok(ranges.size < 4 * 64 * 2 * 2, `size ${ranges.size}`);
    const digits = Array.from({ length: 50 }, () => '1'.repeat(200));
    const { hits, maxWork } = workPerName(ranges, digits);
    assert.equal(hits, 50);
    assert.ok(maxWork <= 200 * ranges.size, `work ${maxWork}`);
  });
});

describe('agreement with picomatch where the dialects agree', () => {
  /** A small seeded generator (mulberry32), so that a failure can be replayed. */
  function random(seed: number): () => number {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const pick = <T>(next: () => number, items: readonly T[]): T =>
    items[Math.floor(next() * items.length)] as T;

  // Pattern pieces picomatch reads as ferry does (once ferry's old translation below is applied).
  const PIECES = [
    'a',
    'b',
    'c',
    '.',
    '-',
    '(',
    '+',
    '*',
    '*',
    '?',
    '[ab]',
    '[!a]',
    '[a-c]',
    '{a,b}',
    '{b,bc}',
    '{1..3}',
    '\\*',
  ];
  const SEGMENT_PIECES = ['**'];
  const NAME_CHARS = ['a', 'b', 'c', '.', '-', '(', '+', '*', '1', '2'];

  function pattern(next: () => number): string {
    const segments: string[] = [];
    const count = 1 + Math.floor(next() * 3);
    for (let s = 0; s < count; s++) {
      if (next() < 0.15) segments.push(pick(next, SEGMENT_PIECES));
      else {
        let segment = '';
        const length = 1 + Math.floor(next() * 4);
        for (let k = 0; k < length; k++) segment += pick(next, PIECES);
        // picomatch drops a leading `./`, and `..` is refused before any pattern is matched.
        segments.push(segment === '.' || segment === '..' ? `${segment}a` : segment);
      }
    }
    return segments.join('/');
  }

  function name(next: () => number): string {
    const segments: string[] = [];
    const count = 1 + Math.floor(next() * 3);
    for (let s = 0; s < count; s++) {
      let segment = '';
      const length = 1 + Math.floor(next() * 4);
      for (let k = 0; k < length; k++) segment += pick(next, NAME_CHARS);
      // Where the dialects differ on purpose: picomatch never lets a wildcard match `.` or `..`, and
      // its `*.*` and `.*` want a character after the dot, where a star elsewhere matches nothing too.
      if (segment.endsWith('.')) segment += 'a';
      segments.push(segment);
    }
    return segments.join('/');
  }

  /** How ferry translated its dialect for picomatch before it had a matcher of its own. */
  function toPicomatch(glob: string): string {
    let out = '';
    for (let i = 0; i < glob.length; i++) {
      const c = glob[i] as string;
      if (c === '\\') {
        const next = glob[i + 1];
        i++;
        if (next === undefined) out += '\\\\';
        else out += /[\p{L}\p{N}]/u.test(next) ? next : `\\${next}`;
      } else if (c === '[') {
        const end = glob.indexOf(']', i + 2);
        const body = glob.slice(i + 1, end);
        out += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        i = end;
      } else if ('()|+@!'.includes(c)) {
        out += `\\${c}`;
      } else {
        out += c;
      }
    }
    return out;
  }

  test('5,000 seeded random patterns, each against 20 names (and names made to match)', () => {
    const next = random(21);
    let compared = 0;
    let matched = 0;
    for (let p = 0; p < 5000; p++) {
      const glob = pattern(next);
      // picomatch reads a `**` touching a brace (`**{a,b}`) as crossing folders; here it is a `*`, as
      // is every `**` that is not a whole segment.
      if (/\*\*\{|\}\*\*/.test(glob)) continue;
      const ours = compileGlob(glob);
      const theirs = picomatch(toPicomatch(glob), { dot: true, strictSlashes: true });
      // Names built from the pattern itself match far more often than random ones.
      const names = Array.from({ length: 20 }, () => name(next));
      names.push(
        glob
          .replace(/\*\*/g, 'a/b')
          .replace(/[*?]/g, 'a')
          .replace(/\[[^\]]*\]/g, 'b')
          .replace(/\{.*?\}/g, 'b'),
      );
      for (const n of names) {
        const expected = theirs(n);
        assert.equal(ours.test(n), expected, `pattern ${JSON.stringify(glob)} name ${JSON.stringify(n)}`);
        compared++;
        if (expected) matched++;
      }
    }
    assert.ok(matched > 2000, `only ${matched} of ${compared} comparisons matched`);
  });
});
