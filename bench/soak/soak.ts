// One soak run (issue 27) against a ferry process someone else started (the bench with
// bench/support/processes.ts, the test with test/support/processes.ts): prepares its buckets and
// locations, runs the load (bench/soak/load.ts) for `durationMs`, samples the process every
// `sampleEveryMs` (bench/soak/watch.ts), then stops the load, waits for its work to end and for the
// process's fds to come back, and judges.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Accepted,
  DEFAULT_PLAN,
  type LoadCounts,
  type LoadPlan,
  minus,
  prepare,
  startLoad,
  type Target,
} from './load.js';
import {
  fdsOf,
  type Outcome,
  type Sample,
  type SoakBounds,
  sampleProcess,
  type Verdict,
  verdict,
} from './watch.js';

export interface SoakOptions {
  target: Target;
  /** The ferry process's pid, read through /proc. */
  pid: number;
  durationMs: number;
  sampleEveryMs: number;
  bounds: SoakBounds;
  plan?: LoadPlan;
  /** Called with each sample as it is taken. */
  onSample?: (sample: Sample) => void;
}

export interface SoakResult extends Outcome {
  verdict: Verdict;
  /** The load's counters over the whole run, the drain included. */
  totals: LoadCounts;
  accepted: Accepted;
}

/** How long the fds may take to come back once the load's work has ended (idle keep-alive sockets close). */
const SETTLE_MS = 30_000;

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const { target, pid } = options;
  await prepare(target, options.plan ?? DEFAULT_PLAN);
  const load = startLoad(target, options.plan ?? DEFAULT_PLAN);
  const start = Date.now();
  const samples: Sample[] = [];
  let before = load.counts();
  try {
    for (let at = options.sampleEveryMs; at <= options.durationMs; at += options.sampleEveryMs) {
      // A fixed clock: each sample at its time from the start, however long the last one took.
      await sleep(Math.max(0, start + at - Date.now()));
      const now = load.counts();
      const sample: Sample = {
        atMs: at,
        ...(await sampleProcess(pid, target.base)),
        counts: minus(now, before),
      };
      before = now;
      samples.push(sample);
      options.onSample?.(sample);
    }
  } finally {
    await load.stop();
  }
  // The fds of the warm-up's end, or fewer, once the sockets of finished work are closed.
  const warmFds = samples[options.bounds.warmupSamples - 1]?.fds ?? 0;
  let settledFds = await fdsOf(pid);
  const deadline = Date.now() + SETTLE_MS;
  while (settledFds - warmFds > options.bounds.fdMargin && Date.now() < deadline) {
    await sleep(500);
    settledFds = await fdsOf(pid);
  }
  const outcome: Outcome = { samples, settledFds, errors: load.errors };
  return {
    ...outcome,
    verdict: verdict(outcome, options.bounds),
    totals: load.counts(),
    accepted: { ...load.accepted },
  };
}
