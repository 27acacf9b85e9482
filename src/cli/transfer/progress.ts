// The progress line of `ferry cp` and `mv` with a path on this computer (docs/cli.md, "Copying files
// to and from this computer"): bytes done of the whole run, rate, ETA, and the file being moved, redrawn
// in place at most ten times a second. Drawn only on a terminal and never with --json or --quiet, so a
// script's stderr holds nothing but errors.
import { clipToWidth } from '../../display.js';
import { duration, printable, size } from '../format.js';

/** How often the line may be redrawn: ten times a second. */
const REDRAW_MS = 100;

export interface Meter {
  /** A file started; `name` is what the line shows while it moves. */
  start(name: string): void;
  /** `bytes` more of the run are done. */
  add(bytes: number): void;
  /** `bytes` counted for a file are undone (its try failed and it will not be retried). */
  drop(bytes: number): void;
  /** Draws the line a last time and ends it (before the summary is printed). */
  end(): void;
}

export interface MeterTotals {
  files: number;
  bytes: number;
}

/** The line itself, for a run `seconds` old; exported to test its wording. */
export function progressLine(
  done: number,
  totals: MeterTotals,
  filesDone: number,
  seconds: number,
  current: string,
  width: number,
): string {
  const rate = seconds > 0 ? done / seconds : 0;
  const left = totals.bytes - done;
  const eta = left <= 0 ? 0 : rate > 0 ? left / rate : Number.NaN;
  const percent = totals.bytes > 0 ? Math.floor((Math.min(done, totals.bytes) / totals.bytes) * 100) : 100;
  const line = `${String(percent).padStart(3)}%  ${size(done)} of ${size(totals.bytes)}  ${size(Math.round(rate))}/s  ETA ${duration(eta)}  ${filesDone}/${totals.files} files  ${printable(current)}`;
  // One line less than the terminal is wide, counted in columns (a CJK name takes two a character).
  return clipToWidth(line, Math.max(20, width - 1));
}

/** A meter that draws on stderr when `draw` holds (a terminal, not --json or --quiet); silent otherwise. */
export function meter(
  totals: MeterTotals,
  draw: boolean,
  clock: () => number = Date.now,
): Meter & {
  /** A file ended (succeeded or failed). */
  finish(): void;
} {
  const started = clock();
  let done = 0;
  let files = 0;
  let current = '';
  let drawnAt = 0;
  const redraw = (force: boolean) => {
    if (!draw) return;
    const now = clock();
    if (!force && now - drawnAt < REDRAW_MS) return;
    drawnAt = now;
    const width = process.stderr.columns || 100;
    process.stderr.write(
      `\r\x1b[K${progressLine(done, totals, files, (now - started) / 1000, current, width)}`,
    );
  };
  return {
    start(name) {
      current = name;
      redraw(false);
    },
    add(bytes) {
      done += bytes;
      redraw(false);
    },
    drop(bytes) {
      done -= bytes;
    },
    finish() {
      files++;
      redraw(files === totals.files);
    },
    end() {
      if (!draw) return;
      redraw(true);
      process.stderr.write('\n');
    },
  };
}
