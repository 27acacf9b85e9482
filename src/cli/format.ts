// Human output: aligned tables, sizes in binary units, times in the local zone. `--json` bypasses all of
// this and prints the API's answer as it came (one document).
import { displayWidth, humanSize, padToWidth, showBidiControls } from '../display.js';

/** 1536 → "1.5 KiB" (humanSize); "-" when unknown. */
export function size(bytes: number | undefined | null): string {
  if (bytes === undefined || bytes === null || bytes < 0) return '-';
  return humanSize(bytes);
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** An RFC 3339 time as "2026-11-25 18:04:12" in the local zone; "-" when absent. */
export function time(iso: string | undefined | null): string {
  if (!iso) return '-';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

/**
 * An RFC 3339 time with its weekday, in `zone` and naming it: "Fri 2026-12-04 09:00 (Europe/Paris)".
 * For times a person acts on (when a mail goes out, when its link stops working), said in the zone the
 * person gave or the computer's own.
 */
export function zonedTime(iso: string, zone: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    weekday: 'short',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(d);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('weekday')} ${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')} (${zone})`;
}

/** This computer's time zone (IANA), UTC when it has none. */
export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Seconds as "1:05" or "1:02:03". */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--:--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}:${pad2(m)}:${pad2(s % 60)}` : `${m}:${pad2(s % 60)}`;
}

export interface Column<T> {
  header: string;
  value: (row: T) => string;
  /** Right-aligned (numbers, sizes). */
  right?: boolean;
}

/**
 * Text from the server (a file name, a label) as one safe line: control characters (a newline in a
 * name would split a table row; an escape sequence would drive the terminal) are written as `\n`, `\t`
 * or `\u{…}` escapes, and the bidirectional controls that make a name display reversed
 * ("…\u202Etxt.exe" shown as "…exe.txt") as `<U+202E>`, as every page ferry renders shows them.
 */
export function printable(text: string): string {
  return showBidiControls(
    text.replace(CONTROL, (c) => {
      if (c === '\n') return '\\n';
      if (c === '\t') return '\\t';
      if (c === '\r') return '\\r';
      return `\\u{${(c.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`;
    }),
  );
}
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its purpose
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * A table with a header row, columns separated by two spaces, the last column not padded. Columns are
 * as wide as their widest cell on a terminal (displayWidth): a CJK character or an emoji takes two.
 */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((row) => columns.map((c) => printable(c.value(row))));
  const widths = columns.map((c, i) =>
    Math.max(displayWidth(c.header), ...cells.map((r) => displayWidth(r[i] ?? ''))),
  );
  const line = (values: string[]) =>
    values
      .map((v, i) => {
        const last = i === values.length - 1;
        if (columns[i]?.right) return padToWidth(v, widths[i] ?? 0, true);
        return last ? v : padToWidth(v, widths[i] ?? 0);
      })
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n');
}

/** Field: value lines, aligned, for one object; absent values are left out. */
export function fields(pairs: ReadonlyArray<readonly [string, string | undefined]>): string {
  const present = pairs.filter((p): p is readonly [string, string] => p[1] !== undefined);
  const width = Math.max(...present.map(([k]) => k.length));
  return present.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${printable(v)}`).join('\n');
}

/** "1 file", "2 files"; "1 entry", "2 entries" (a consonant and y: ies). */
export function count(n: number, noun: string): string {
  if (n === 1) return `${n} ${noun}`;
  return `${n} ${/[^aeiou]y$/.test(noun) ? `${noun.slice(0, -1)}ies` : `${noun}s`}`;
}
