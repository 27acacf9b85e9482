// Sizes, times, rates and remaining times as people read them; names with their bidi controls shown
// as <U+XXXX> (the server's own helper, src/display.ts), so "a\u202Etxt.exe" does not read as "aexe.txt".
import { humanSize } from '../../src/display.js';

export { showBidiControls as visibleName } from '../../src/display.js';

/** A size (or a rate's bytes) as the CLI and the share pages write it (humanSize), whole bytes; "—" when unknown. */
export function bytes(n: number | undefined): string {
  if (n === undefined || n < 0) return '—';
  return humanSize(Math.round(n));
}

export function time(iso: string | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/**
 * A time in a given zone, naming it: "Thu, 12/3/2026, 2:00 AM (Europe/Berlin)". For a schedule's next run,
 * which its words ("every day at 02:00") say in the schedule's zone, whatever the browser's.
 */
export function timeIn(iso: string | undefined, zone: string): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  try {
    const shown = d.toLocaleString(undefined, {
      timeZone: zone,
      weekday: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: '2-digit',
    });
    return `${shown} (${zone})`;
  } catch {
    return d.toLocaleString();
  }
}

export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '—';
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.ceil(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}
