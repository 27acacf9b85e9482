// How an attempt at a piece of work (an object, a transfer, a job's planning) ends, decided in one
// place for all of them: done; again later, after a backoff, when the failure is passing and attempts
// are left; or failed for good. An exception that is not a classified failure is a crash: counted,
// tried again after a backoff, and failed once the work has crashed FERRY_WORK_MAX_CRASHES times
// (docs/api.md, "Background work that keeps failing"). The lifecycle modules write what is decided here.
import type { Clock } from '../clock.js';
import type { Touched } from '../durable/work.js';
import { isFerryError } from '../errors.js';
import {
  backoffMs,
  type CrashPolicy,
  crashMessage,
  crashReason,
  describe,
  MAX_ATTEMPTS,
  retryable,
} from '../queue/backoff.js';
import type { Verdict } from '../states.js';
import type { HashKind } from '../stores/contract.js';

export type Settlement =
  /** `reason`: why a skipped object was left alone (a plan's object that changed since the plan). */
  | {
      kind: 'done';
      bytes: number;
      bytesTotal?: number;
      skipped?: boolean;
      deleted?: boolean;
      reason?: string;
      /** The checksums a copy compared, as `kind:value` (a job object keeps them for its report). */
      checksums?: { source: string; destination: string };
      /**
       * Bytes were written: the hash kinds that proved them, none when only the size could
       * (docs/api.md, "Verification"; a job object keeps it for its report and counts `size_only`).
       */
      verified?: HashKind[];
      /** What a verify's object found (docs/api.md, "Verify"); `reason` says how. */
      verdict?: Verdict;
      /** What the work did at its destination, kept for an undo (src/engine/backup.ts). */
      touched?: Touched;
    }
  /** `crashed`: the attempt crashed, and the row keeps the crash its claim counted. */
  | { kind: 'again'; error: string; runAfter: number; crashed?: boolean }
  | { kind: 'failed'; error: string };

/**
 * How a settlement's `verified` is kept in a row (job_objects.verified, transfers.verified): `size`
 * when no hash could prove the bytes, else the kinds that did, comma-separated. A row that wrote no
 * bytes keeps null (src/api/views.ts, proofView).
 */
export function provenAs(kinds: readonly HashKind[]): string {
  return kinds.length === 0 ? 'size' : kinds.join(',');
}

/** The crashes of the work being settled: how many its claims counted (this one included), and the limit. */
export interface Crashes {
  count: number;
  policy: CrashPolicy;
}

/**
 * What follows a failed attempt number `attempts` (counted from 1). Without `crashes` (planning, which
 * has no count of them), an unclassified exception fails the work at once.
 */
export function afterFailure(err: unknown, attempts: number, clock: Clock, crashes?: Crashes): Settlement {
  if (crashes !== undefined && !isFerryError(err)) return afterCrash(crashMessage(err), crashes, clock);
  const error = describe(err);
  if (retryable(err) && attempts < MAX_ATTEMPTS) {
    return { kind: 'again', error, runAfter: clock.now() + backoffMs(attempts, err) };
  }
  return { kind: 'failed', error };
}

/** What follows a crash with `message` (crashMessage): again after a backoff, or failed at the limit. */
export function afterCrash(message: string, crashes: Crashes, clock: Clock): Settlement {
  if (crashes.count >= crashes.policy.max) {
    return { kind: 'failed', error: crashReason(crashes.count, message) };
  }
  return {
    kind: 'again',
    error: `the worker crashed on this work: ${message}`,
    runAfter: clock.now() + backoffMs(crashes.count, {}),
    crashed: true,
  };
}
