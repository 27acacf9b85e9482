// Names as ferry shows them to people (docs/api.md, "Share links", and docs/console.md): a file name is
// whatever its store allows, bidirectional-text controls included, and a right-to-left override makes
// "report\u202Etxt.exe" display as "reportexe.txt". Every page ferry renders (share pages, mails, the
// web console) shows such controls escaped, as <U+202E>, so the name reads as what it is; a download's
// Content-Disposition drops them, since a saved file name has no way to show them. Sizes are written one
// way everywhere (humanSize), and HTML text is escaped by one function (escapeHtml).
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
