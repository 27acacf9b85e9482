// Showing a job or a transfer followed to its end (src/cli/follow.ts): a progress bar on a terminal
// (objects, bytes, rate, ETA), one plain line per change otherwise, then the final state. The exit code
// says how the work ended: 0 complete, 6 failed, partial or canceled.
import type { Counts, Job, Transfer } from '../api/routes.js';
import type { Context } from './context.js';
import { CliError, EXIT } from './exit.js';
import { duration, size } from './format.js';

/** What one state shows, in numbers both kinds share. */
interface Progress {
  status: string;
  done: number;
  total: number | undefined;
  /** "objects" for jobs, "bytes" for transfers: what done/total count. */
  unit: 'objects' | 'bytes';
  bytes: number;
  failed: number;
}

/** The objects a job has finished with: copied, skipped, deleted (a sync's) and failed. */
export function doneOf(c: Counts): number {
  return c.succeeded + c.skipped + (c.deleted ?? 0) + c.failed;
}

export function jobProgress(job: Job): Progress {
  const c = job.counts;
  const done = doneOf(c);
  return {
    status: job.status,
    done,
    // A server whose total leaves a sync's deletions out would show more done than there are.
    total: job.status === 'planning' ? undefined : Math.max(c.total, done),
    unit: 'objects',
    bytes: job.bytes_done,
    failed: c.failed,
  };
}

export function transferProgress(t: Transfer): Progress {
  return {
    status: t.status,
    done: t.bytes_done,
    total: t.bytes_total,
    unit: 'bytes',
    bytes: t.bytes_done,
    failed: 0,
  };
}

function plainLine(p: Progress): string {
  const counted =
    p.unit === 'objects'
      ? `${p.done}/${p.total ?? '?'} objects, ${size(p.bytes)}`
      : `${size(p.bytes)}${p.total === undefined ? '' : ` of ${size(p.total)}`}`;
  return `${p.status}: ${counted}${p.failed > 0 ? `, ${p.failed} failed` : ''}`;
}

/** The bar a terminal shows while a watch follows; exported to test its wording. */
export function barLine(p: Progress, bytesPerSecond: number, etaSeconds: number, width: number): string {
  // Complete is whole, whatever the counts say (docs/api.md, "Sync": a complete job is 100 %).
  const fraction = p.status === 'complete' ? 1 : p.total ? Math.min(1, p.done / p.total) : 0;
  const cells = 24;
  const filled = Math.round(fraction * cells);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(cells - filled)}]`;
  const percent = p.total || p.status === 'complete' ? `${Math.floor(fraction * 100)}%`.padStart(4) : '   ?';
  const line = `${bar} ${percent}  ${plainLine(p)}  ${size(bytesPerSecond)}/s  ETA ${duration(etaSeconds)}`;
  return line.slice(0, Math.max(20, width - 1));
}

export interface WatchOptions {
  /** Draw a bar (a terminal) or print plain lines. */
  tty: boolean;
  /** What to do next when the work did not complete, added to the error. */
  hint?: string;
}

/**
 * Shows each state of `states` (src/cli/follow.ts) until the work ends: progress on stderr, then the
 * final state with `show`, which it answers when the work completed.
 */
export async function watch<T extends { status: string; error?: string }>(
  ctx: Context,
  states: AsyncIterable<T>,
  progress: (state: T) => Progress,
  show: (state: T) => string,
  options: WatchOptions,
): Promise<T> {
  const started = Date.now();
  let first: Progress | undefined;
  let lastPlain = '';
  let final: T | undefined;
  for await (const state of states) {
    final = state;
    const p = progress(state);
    first ??= p;
    if (options.tty) {
      const seconds = (Date.now() - started) / 1000;
      const rate = seconds > 0 ? (p.bytes - first.bytes) / seconds : 0;
      const doneRate = seconds > 0 ? (p.done - first.done) / seconds : 0;
      const left = p.total === undefined ? Number.NaN : p.total - p.done;
      const eta = left <= 0 ? 0 : doneRate > 0 ? left / doneRate : Number.NaN;
      process.stderr.write(`\r\x1b[K${barLine(p, rate, eta, process.stderr.columns || 100)}`);
    } else {
      const line = plainLine(p);
      if (line !== lastPlain) process.stderr.write(`${line}\n`);
      lastPlain = line;
    }
  }
  // follow answers one state at least, or throws.
  if (final === undefined) throw new CliError('the server answered no state', EXIT.failure);
  const last = final;
  if (options.tty) process.stderr.write('\n');
  ctx.print(last, () => show(last));
  if (last.status !== 'complete') {
    const why = last.error ? `: ${last.error}` : '';
    throw new CliError(
      `ended ${last.status}${why}${options.hint ? `; ${options.hint}` : ''}`,
      EXIT.workFailed,
    );
  }
  return last;
}
