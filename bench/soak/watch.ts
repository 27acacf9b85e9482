// The soak's watch on a ferry process (issue 27): samples read from outside the server at a fixed
// interval, the table they print as, and the verdict on them. One module for `npm run bench:soak` and
// test/engine/soak.test.ts, so the CI's 2-minute run judges as the 30-minute one does.
//
// What a sample holds:
// - RSS: VmRSS of /proc/<pid>/status (bench/support/proc.ts).
// - the young generation: V8's new space as ferry's GET /metrics gives it
//   (ferry_nodejs_heap_space_size_total_bytes{space="new"}, read in the same moment as RSS). V8 sizes it
//   by how much survives its scavenges, between 1 MiB and a ceiling set by the Node release: new space
//   reached 32 MiB on Node 20 and 128 MiB on Node 24 (--max-semi-space-size 16 and 64 MiB) in a loop
//   that only allocates. It grows in doublings, so on Node 24 RSS steps up by 16 to 64 MiB at a time,
//   whenever the load first makes it: a bounded resize, not a leak, so the RSS check allows for it.
// - fds: the entries of /proc/<pid>/fd.
// - event-loop delay: ferry's GET /metrics gauges ferry_nodejs_eventloop_lag_p99_seconds and _max_
//   (prom-client's collectDefaultMetrics over perf_hooks.monitorEventLoopDelay, 10 ms resolution).
//   The histogram is reset by each scrape and only the sampler scrapes, so each sample's figures cover
//   the interval since the previous one. They include the 10 ms resolution: an idle process reads
//   about 10.1 ms.
// - the load's counters over the interval (bench/soak/load.ts).
//
// The verdict: the samples of the warm-up are left out; the rest are cut into thirds and the last
// third is compared with the first. A figure that grows without bound grows between them at any run
// length; one that levels off after the warm-up does not. The bounds (SoakBounds) are stated with the
// figures in docs/performance.md, "The soak".
import { readdir } from 'node:fs/promises';
import { memoryOf, mib } from '../support/proc.js';
import type { LoadCounts } from './load.js';

export interface Sample {
  /** Milliseconds since the load started. */
  atMs: number;
  rssBytes: number;
  /** V8's new space (the young generation), bytes, from /metrics. */
  youngBytes: number;
  fds: number;
  /** Event-loop delay over the interval, from /metrics: p99 and max, milliseconds. */
  loopP99Ms: number;
  loopMaxMs: number;
  /** The load's counters over the interval. */
  counts: LoadCounts;
}

export async function fdsOf(pid: number): Promise<number> {
  return (await readdir(`/proc/${pid}/fd`)).length;
}

/**
 * A gauge's value in Prometheus text, or NaN when it is not there: its first line, or with `labels`
 * (such as `space="new"`) the line whose labels are exactly those.
 */
export function gauge(text: string, name: string, labels?: string): number {
  const at =
    labels === undefined ? '(?:\\{[^}]*\\})?' : `\\{${labels.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\}`;
  const match = new RegExp(`^${name}${at} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

/** What the process looks like now, from outside: /proc and GET /metrics. */
export async function sampleProcess(pid: number, base: string): Promise<Omit<Sample, 'atMs' | 'counts'>> {
  const [memory, fds, metrics] = await Promise.all([
    memoryOf(pid),
    fdsOf(pid),
    fetch(`${base}/metrics`).then((r) => {
      if (!r.ok) throw new Error(`GET /metrics answered ${r.status}`);
      return r.text();
    }),
  ]);
  return {
    rssBytes: memory.rssBytes,
    youngBytes: gauge(metrics, 'ferry_nodejs_heap_space_size_total_bytes', 'space="new"'),
    fds,
    loopP99Ms: gauge(metrics, 'ferry_nodejs_eventloop_lag_p99_seconds') * 1000,
    loopMaxMs: gauge(metrics, 'ferry_nodejs_eventloop_lag_max_seconds') * 1000,
  };
}

export interface SoakBounds {
  /** Samples at the start that are the warm-up, left out of the comparison. */
  warmupSamples: number;
  /**
   * RSS: the largest sample of the last third may exceed the largest of the first third by at most
   * max(rssGrowthBytes, rssGrowthRatio × that first maximum), plus the growth of the young generation's
   * largest size between the two thirds.
   */
  rssGrowthBytes: number;
  rssGrowthRatio: number;
  /**
   * fds: the largest sample of the last third may exceed the largest of the first third by at most
   * fdMargin, and once the load has stopped and its work ended, the count comes back to within
   * fdMargin of the last warm-up sample.
   */
  fdMargin: number;
  /** Event-loop delay: the median p99 of the last third at most loopRatio × that of the first + loopSlackMs. */
  loopRatio: number;
  loopSlackMs: number;
}

const MIB = 1024 * 1024;

/** The bounds of `npm run bench:soak` (per-minute samples, the first two the warm-up). */
export const BENCH_BOUNDS: SoakBounds = {
  warmupSamples: 2,
  rssGrowthBytes: 16 * MIB,
  rssGrowthRatio: 0.1,
  fdMargin: 5,
  loopRatio: 2,
  loopSlackMs: 10,
};

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface Verdict {
  ok: boolean;
  checks: Check[];
}

function thirds<T>(items: readonly T[]): [T[], T[]] {
  const size = Math.max(1, Math.floor(items.length / 3));
  return [items.slice(0, size), items.slice(items.length - size)];
}

const max = (values: number[]) => Math.max(...values);
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The least-squares slope of `y` over `x`, per unit of x. */
export function slope(points: Array<[number, number]>): number {
  const n = points.length;
  const mx = points.reduce((t, [x]) => t + x, 0) / n;
  const my = points.reduce((t, [, y]) => t + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

export interface Outcome {
  samples: Sample[];
  /** fds once the load had stopped and its work had ended. */
  settledFds: number;
  /** Every error the load saw (unexpected answers, failed transfers and sends, work left unfinished). */
  errors: string[];
}

/** Judges a run: errors, and growth of RSS, fds and event-loop delay after the warm-up. */
export function verdict({ samples, settledFds, errors }: Outcome, bounds: SoakBounds): Verdict {
  const checks: Check[] = [];
  checks.push({
    name: 'errors',
    ok: errors.length === 0,
    detail: errors.length === 0 ? 'none' : `${errors.length}: ${errors.slice(0, 5).join('; ')}`,
  });
  const warm = samples.slice(0, bounds.warmupSamples);
  const steady = samples.slice(bounds.warmupSamples);
  if (steady.length < 3 || warm.length === 0) {
    checks.push({
      name: 'samples',
      ok: false,
      detail: `${steady.length} samples after a warm-up of ${warm.length}: at least 3 after it are needed`,
    });
    return { ok: false, checks };
  }
  const [first, last] = thirds(steady);

  // RSS may grow by the bound, and by as much as V8 grew the young generation between the thirds (the
  // sample's comment above): a resize is bounded by the Node release's ceiling, a leak is not.
  const rssFirst = max(first.map((s) => s.rssBytes));
  const rssLast = max(last.map((s) => s.rssBytes));
  const youngFirst = max(first.map((s) => s.youngBytes));
  const youngLast = max(last.map((s) => s.youngBytes));
  const youngGrowth = Number.isFinite(youngLast - youngFirst) ? Math.max(0, youngLast - youngFirst) : 0;
  const rssAllowed = Math.max(bounds.rssGrowthBytes, bounds.rssGrowthRatio * rssFirst) + youngGrowth;
  const rssSlope = slope(steady.map((s) => [s.atMs / 60_000, s.rssBytes]));
  checks.push({
    name: 'RSS',
    ok: rssLast - rssFirst <= rssAllowed,
    detail: `max of the first third ${mib(rssFirst)}, of the last ${mib(rssLast)} (${rssLast >= rssFirst ? '+' : '−'}${mib(Math.abs(rssLast - rssFirst))}; at most +${mib(rssAllowed)}, the young generation's growth ${mib(youngGrowth)} of it: ${mib(youngFirst)}, then ${mib(youngLast)}); after the warm-up the trend is ${rssSlope >= 0 ? '+' : '−'}${mib(Math.abs(rssSlope))}/min`,
  });

  const fdFirst = max(first.map((s) => s.fds));
  const fdLast = max(last.map((s) => s.fds));
  checks.push({
    name: 'fds under load',
    ok: fdLast - fdFirst <= bounds.fdMargin,
    detail: `max of the first third ${fdFirst}, of the last ${fdLast} (at most +${bounds.fdMargin})`,
  });
  const fdWarm = (warm.at(-1) as Sample).fds;
  checks.push({
    name: 'fds at the end',
    ok: settledFds - fdWarm <= bounds.fdMargin,
    detail: `${settledFds} once the load's work had ended, ${fdWarm} after the warm-up (at most +${bounds.fdMargin})`,
  });

  const loopFirst = median(first.map((s) => s.loopP99Ms));
  const loopLast = median(last.map((s) => s.loopP99Ms));
  const loopAllowed = bounds.loopRatio * loopFirst + bounds.loopSlackMs;
  checks.push({
    name: 'event-loop delay',
    ok: loopLast <= loopAllowed,
    detail: `median p99 of the first third ${loopFirst.toFixed(1)} ms, of the last ${loopLast.toFixed(1)} ms (at most ${loopAllowed.toFixed(1)} ms)`,
  });
  return { ok: checks.every((c) => c.ok), checks };
}

const COLUMNS = [
  'time',
  'RSS MiB',
  'young MiB',
  'fds',
  'loop p99 ms',
  'loop max ms',
  'requests',
  'errors',
  'copies',
  'jobs',
  'shares',
  'sends',
  'events',
] as const;

function cells(s: Sample): string[] {
  const c = s.counts;
  const minutes = Math.floor(s.atMs / 60_000);
  const seconds = Math.round((s.atMs % 60_000) / 1000);
  return [
    `${minutes}:${String(seconds).padStart(2, '0')}`,
    (s.rssBytes / MIB).toFixed(1),
    (s.youngBytes / MIB).toFixed(1),
    String(s.fds),
    s.loopP99Ms.toFixed(1),
    s.loopMaxMs.toFixed(1),
    String(c.requests),
    String(c.errors),
    String(c.copies),
    String(c.jobs),
    String(c.shares),
    String(c.sends),
    String(c.events),
  ];
}

/** The header of the table, as Markdown (two lines), with `extra` columns at the end. */
export function tableHeader(extra: string[] = []): string {
  const columns = [...COLUMNS, ...extra];
  return `| ${columns.join(' | ')} |\n|${columns.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`;
}

/** One sample as a row of the table, with `extra` cells at the end. */
export function tableRow(sample: Sample, extra: string[] = []): string {
  return `| ${[...cells(sample), ...extra].join(' | ')} |`;
}

export function formatVerdict(v: Verdict): string {
  const lines = v.checks.map((c) => `${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
  return `${lines.join('\n')}\n${v.ok ? 'verdict: nothing grows, no errors' : 'verdict: FAIL'}`;
}
