// Following a job or a transfer to its end (docs/api.md, "Polling"): a progress bar on a terminal
// (objects, bytes, rate, ETA), one plain line per change otherwise, then the final state. The exit code
// says how the work ended: 0 complete, 6 failed, partial or canceled.
import type { Counts, Job, Transfer } from '../api/transfers.js';
import type { Context } from './context.js';
import { CliError, EXIT } from './exit.js';
import { duration, size } from './format.js';

const END = new Set(['complete', 'failed', 'partial', 'canceled']);

/** What one poll shows, in numbers both kinds share. */
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

/** The bar a terminal shows while a watch polls; exported to test its wording. */
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
  /** Milliseconds between polls. */
  intervalMs: number;
  /** Draw a bar (a terminal) or print plain lines. */
  tty: boolean;
  /** What to do next when the work did not complete, added to the error. */
  hint?: string;
}

/** Polls until the work ends; prints progress on stderr and the final state with `show`. */
export async function watch<T extends { status: string; error?: string }>(
  ctx: Context,
  fetchState: () => Promise<T>,
  progress: (state: T) => Progress,
  show: (state: T) => string,
  options: WatchOptions,
): Promise<void> {
  const started = Date.now();
  let first: Progress | undefined;
  let lastPlain = '';
  let state = await fetchState();
  for (;;) {
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
    if (END.has(state.status)) break;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    state = await fetchState();
  }
  if (options.tty) process.stderr.write('\n');
  ctx.print(state, () => show(state));
  if (state.status !== 'complete') {
    const why = state.error ? `: ${state.error}` : '';
    throw new CliError(
      `ended ${state.status}${why}${options.hint ? `; ${options.hint}` : ''}`,
      EXIT.workFailed,
    );
  }
}
