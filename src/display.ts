// Names as ferry shows them to people (docs/api.md, "Share links", and docs/console.md): a file name is
// whatever its store allows, bidirectional-text controls included, and a right-to-left override makes
// "report\u202Etxt.exe" display as "reportexe.txt". Every page ferry renders (share pages, mails, the
// web console) shows such controls escaped, as <U+202E>, so the name reads as what it is; a download's
// Content-Disposition drops them, since a saved file name has no way to show them. Sizes are written one
// way everywhere (humanSize), HTML text is escaped by one function (escapeHtml), and the columns a text
// takes on a terminal are counted by one (displayWidth).
// This module has no imports: the web console (ui/src) bundles it too.

/** The bidi controls: embeddings and overrides, isolates, and the implicit marks (LRM, RLM, ALM). */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

function codePoint(c: string): string {
  return `<U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** `text` with every bidi control shown as <U+XXXX>, for display. */
export function showBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS, codePoint);
}

/** `text` without bidi controls, for a name a client saves a file under. */
export function withoutBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS, '');
}

/** A transfer's `from` or `to` as the request gave it (docs/api.md, "What a transfer is"). */
export type Given = string | string[] | { name?: string; id?: string; path: string };

/** One line for a `from` or `to`: a path, the first of several and how many more, or a target. */
export function givenText(value: Given | undefined): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const [first = ''] = value;
    return value.length > 1 ? `${first} (+${value.length - 1} more)` : first;
  }
  return `${value.name ?? value.id ?? ''}:${value.path}`;
}

/** A transfer's `from → to` on one line; `from` alone for a transfer without a destination (remove). */
export function givenFromTo(from: Given | undefined, to: Given | undefined): string {
  return to === undefined ? givenText(from) : `${givenText(from)} → ${givenText(to)}`;
}

const SIZE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** A size as people read it, in binary units: "512 B", "1.5 KiB", "12 MiB" (one decimal under 10). */
export function humanSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < SIZE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${SIZE_UNITS[unit]}`;
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** `value` safe as HTML text or as a quoted attribute value. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/**
 * East Asian Wide and Fullwidth code points (Unicode's EastAsianWidth W and F): Hangul Jamo, the CJK
 * blocks, Hiragana and Katakana, Hangul syllables, compatibility ideographs, fullwidth forms and the
 * supplementary ideographic planes. A terminal gives each two columns.
 */
const WIDE =
  /^[\u1100-\u115f\u231a\u231b\u2329\u232a\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{16fe0}-\u{16fe4}\u{17000}-\u{18cff}\u{1b000}-\u{1b2ff}\u{1f200}-\u{1f2ff}\u{20000}-\u{2fffd}\u{30000}-\u{3fffd}]/u;
/** An emoji shown as a picture: one by default, or one a variation selector 16 asks for, or a flag. */
const EMOJI = /\p{Emoji_Presentation}|\p{Extended_Pictographic}\ufe0f|\p{Regional_Indicator}{2}/u;
/** What takes no column of its own: combining marks (variation selectors among them), format characters (joiners). */
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]+$/u;

let graphemes: Intl.Segmenter | undefined;

/**
 * How many terminal columns `text` takes: two for a wide (CJK) character or an emoji, however many code
 * points make it (a family joined by ZWJ, a flag), none for a combining mark, one for anything else. The
 * CLI's tables align by this, so `日本語.txt` (10 columns, 7 characters) keeps its column straight.
 */
export function displayWidth(text: string): number {
  // ASCII, the common case, is one column a character.
  if (/^[\x20-\x7e]*$/.test(text)) return text.length;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    if (EMOJI.test(segment) || WIDE.test(segment)) width += 2;
    else if (!ZERO_WIDTH.test(segment)) width += 1;
  }
  return width;
}

/** `text` padded with spaces to `width` columns (displayWidth), on the right or, with `start`, the left. */
export function padToWidth(text: string, width: number, start = false): string {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return start ? fill + text : text + fill;
}

/** `text` cut to at most `width` columns (displayWidth), whole characters only, `…` marking a cut. */
export function clipToWidth(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let out = '';
  let used = 0;
  for (const { segment } of graphemes.segment(text)) {
    const w = displayWidth(segment);
    if (used + w > width - 1) break;
    out += segment;
    used += w;
  }
  return `${out}…`;
}

/** A schedule run's outcome as `GET /v1/schedules/{id}` gives it (docs/api.md, "Schedules"). */
const RUN_OUTCOMES: Record<string, string> = {
  started: 'started',
  skipped_overlap: 'skipped: the run before was still going',
  failed: 'failed to start',
};

/**
 * A schedule run in words, and the tone of its badge: a started run as its job stands now (from
 * `GET /v1/jobs?schedule_id=`: finished, finished with failures, failed, canceled, running), any other
 * outcome as the schedule recorded it. The console's schedule page and `ferry schedules show` both say it.
 */
export function scheduleRunText(
  outcome: string,
  job: { status: string; counts: { failed: number } } | undefined,
): { words: string; tone: string } {
  if (outcome !== 'started' || job === undefined)
    return { words: RUN_OUTCOMES[outcome] ?? outcome, tone: outcome };
  const failed = job.counts.failed;
  switch (job.status) {
    case 'complete':
      return { words: 'finished', tone: 'complete' };
    case 'partial':
      return { words: `finished, ${failed} object${failed === 1 ? '' : 's'} failed`, tone: 'partial' };
    case 'failed':
      return { words: 'failed', tone: 'failed' };
    case 'canceled':
      return { words: 'canceled', tone: 'canceled' };
    default:
      return { words: 'running', tone: 'running' };
  }
}
