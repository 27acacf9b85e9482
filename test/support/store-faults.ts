// Issue 27, "Faults, rotation and scale": the one table of store faults and the harness that runs it
// (test/engine/store-faults.test.ts: s3rver, azurite, the gcs and Dropbox fakes;
// test/engine/store-faults-oauth.test.ts: the OneDrive, Google Drive and Box fakes, a file of its own
// so that the test runner runs the two side by side). A test file describes its routes (which side of
// a copy is faulty, in front of which server) and storeFaultTable registers every case on each.
//
// Every fault of the fault proxy (./fault-proxy.ts) is injected on the requests that carry the
// objects' bytes, and each case checks what docs/api.md promises ("Transfers", "Copy", "Outbound
// calls"): the job ends; every object is either copied with identical bytes (read back and compared)
// or listed in the job's failures with its reason; no destination object holds other bytes than its
// source; and each retry waited what the documented backoff says (1 s doubling, half fixed and half
// random, never less than Retry-After).
//
// The clock stands still while a job runs and is moved to the next retry time once nothing is running,
// so the waits read exactly and cost no real time. The idle and headers bounds of outbound calls are
// set to 1 s (FAULT_APP_ENV), so that a stalled or late answer is noticed quickly.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { MAX_ATTEMPTS } from '../../src/queue/backoff.js';
import type { TestApp } from './app.js';
import type { SkippingClock } from './clock.js';
import type { Fault, FaultProxy, SeenRequest } from './fault-proxy.js';
import { unique } from './fixtures.js';
import { type Call, createLocation, waitFor } from './transfers.js';
import { waitUntil } from './wait.js';

/** The objects every case copies: a short one and three of tens to hundreds of KiB. */
export const OBJECTS = (): Record<string, Buffer> => ({
  'a.bin': randomBytes(200_000),
  'b.bin': randomBytes(70_000),
  'c.txt': Buffer.from('the third object'),
  'd.bin': randomBytes(300_000),
});

/** The settings of the app under test: loopback stores, and outbound bounds short enough to wait out. */
export const FAULT_APP_ENV: Record<string, string> = {
  FERRY_EGRESS_ALLOW: '127.0.0.1/32',
  FERRY_OUTBOUND_IDLE_SECONDS: '1',
  FERRY_OUTBOUND_HEADERS_SECONDS: '1',
};

/** Where a bulk job's faults are injected: one side of the copy, in front of one local server. */
export interface Route {
  /** "<store> source" or "<store> destination". */
  name: string;
  /** The proxy in front of the faulty side's server. */
  proxy: () => FaultProxy;
  /** The requests that carry an object's bytes on the faulty side: reads of a source, writes of a destination. */
  data: (request: SeenRequest) => boolean;
  /** The path of the object a data request is about (what matters: it ends with "/<key>"). */
  pathOf: (request: SeenRequest) => string | undefined;
  /** Cases that do not run on this route (by name), and why. */
  skips?: Record<string, string>;
  /**
   * A destination whose writes prove every byte (docs/api.md, "Verification"), on which the damaged
   * uploads run. `inParts` (else DAMAGED_PART is skipped): `size`, the least object the engine sends
   * in parts (or blocks); `laterPart`, a request that carries one of them.
   */
  proves?: { inParts?: { size: number; laterPart: (request: SeenRequest) => boolean } };
  /**
   * A source that reports a hash the streamed copy checks against the bytes it reads (md5, sha1:
   * src/objects/verify.ts, ByteCounter), on which a download damaged on the way runs.
   */
  readsChecked?: boolean;
  /** A new workspace with both locations, the source seeded with `objects` and the destination ready. */
  setup(objects: Record<string, Buffer>): Promise<{ call: Call; from: string; to: string }>;
  /** The bytes at the destination key, or undefined when there is no object there. */
  read(key: string): Promise<Buffer | undefined>;
}

/** How a case is expected to end. */
interface Case {
  name: string;
  fault: Fault;
  /** How many of the matching requests get it (default 2). */
  count?: number;
  /** Aimed at the data requests of one object only (default: any object's). */
  key?: string;
  /** The kept-alive connection reset: applied by resetReusedNext, not by inject. */
  resetReused?: boolean;
  /** The Retry-After (seconds) the fault carries, which a retry after it must honour. */
  retryAfter?: number;
  /** What a retried object's error says after this fault. */
  error: RegExp;
  /** The keys that end failed (default none). */
  failed?: string[];
  /** Only for a source: an upload has no such fault. */
  sourcesOnly?: boolean;
  /**
   * Only for a destination that proves its writes (Route.proves), and it damages an upload: every
   * object ends proven by a checksum (report lines `verified: "checksum"`, `size_only` 0). With
   * `inParts`, the object aimed at is one the engine uploads in parts, and one of those is damaged.
   */
  damages?: { inParts: boolean };
  /** An answer that is no fault at all: nothing is tried again (default: something is). */
  harmless?: boolean;
}

const answer = (status: number, retryAfter?: number): Fault => ({
  kind: 'fail',
  answer: {
    status,
    headers: {
      'content-type': 'text/plain',
      ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
    },
    body: 'a fault of the proxy',
  },
});

// Case names, for a route's skips.
export const RESET_REUSED = 'a kept-alive connection reset on reuse';
export const STALLED = 'a stalled body';
export const WHOLE_UNFRAMED = 'a whole body without Content-Length, ended by the connection';
export const DAMAGED = 'an upload’s body damaged on the way, once';
export const DAMAGED_READ = 'a download’s body damaged on the way, once';
export const DAMAGED_PART = 'one part of an upload in parts damaged on the way, once';

/** Why a destination that proves its writes does not run DAMAGED_PART here. */
const NOT_IN_PARTS = 'no object the engine uploads in parts is given for this route';

/**
 * Why a route does not run DAMAGED, DAMAGED_PART or DAMAGED_READ here: the provider fakes change an
 * upload's bytes themselves (../support/corrupt-uploads.ts, run by both store-faults files), and a
 * download is checked against the source's hash only where it reports MD5 or SHA-1.
 */
export const NOT_PROVEN =
  'a damaged upload to this provider is a case of corrupt-uploads.ts; damaged reads run on S3 and Azure sources';

/** Why a route cannot run RESET_REUSED: no request of it comes on a kept-alive connection. */
export const NO_REUSE =
  'each object makes one call to the host behind the proxy, and the job’s objects run at once, each on a connection of its own';

const CASES: Case[] = [
  { name: '500 without Retry-After', fault: answer(500), error: /\(HTTP 500\)/ },
  { name: '500 with Retry-After', fault: answer(500, 3), retryAfter: 3, error: /\(HTTP 500\)/ },
  { name: '503 without Retry-After', fault: answer(503), error: /\(HTTP 503\)/ },
  { name: '503 with Retry-After', fault: answer(503, 3), retryAfter: 3, error: /\(HTTP 503\)/ },
  { name: '429 without Retry-After', fault: answer(429), error: /\(HTTP 429\)/ },
  { name: '429 with Retry-After', fault: answer(429, 3), retryAfter: 3, error: /\(HTTP 429\)/ },
  {
    name: 'a 500 on every attempt of one object',
    fault: answer(500),
    count: MAX_ATTEMPTS,
    key: 'b.bin',
    error: /\(HTTP 500\)$/,
    failed: ['b.bin'],
  },
  { name: 'an answer later than the bound', fault: { kind: 'delay', ms: 2500 }, error: /time|ETIMEDOUT/i },
  { name: 'a connection dropped mid-body', fault: { kind: 'drop' }, count: 1, error: /./ },
  { name: 'a body truncated, ended cleanly', fault: { kind: 'truncate', side: 'answer' }, error: /./ },
  {
    name: 'a body without Content-Length ended early by the connection',
    fault: { kind: 'truncate', side: 'answer', unframed: true },
    sourcesOnly: true,
    error: /./,
  },
  {
    name: WHOLE_UNFRAMED,
    fault: { kind: 'unframed' },
    count: 4,
    sourcesOnly: true,
    harmless: true,
    error: /./,
  },
  { name: STALLED, fault: { kind: 'stall' }, count: 1, error: /time|ETIMEDOUT|ended early|no byte/i },
  {
    name: RESET_REUSED,
    fault: { kind: 'pass' },
    resetReused: true,
    error: /ECONNRESET|socket hang up|connection/i,
  },
  // The fault of issue 37: one byte of an upload changed on the way, the first time only. The
  // provider refuses the body (its Content-MD5) or ferry finds that the MD5 it reports is not the
  // one sent; either way the object is tried again and arrives whole, never complete with other bytes.
  {
    name: DAMAGED,
    fault: { kind: 'corrupt' },
    count: 1,
    key: 'a.bin',
    damages: { inParts: false },
    error: /BadDigest|MD5/i,
  },
  // The same on a source's answer: the source's own MD5 is not that of the bytes read.
  {
    name: DAMAGED_READ,
    fault: { kind: 'corrupt', side: 'answer' },
    count: 1,
    key: 'a.bin',
    sourcesOnly: true,
    damages: { inParts: false },
    error: /md5/i,
  },
  {
    name: DAMAGED_PART,
    fault: { kind: 'corrupt' },
    count: 1,
    key: 'big.bin',
    damages: { inParts: true },
    error: /BadDigest|MD5/i,
  },
];

/** A case as it applies to a destination: a truncated upload is the request's body cut short. */
function forDestination(c: Case): Case {
  if (c.fault.kind === 'truncate') return { ...c, fault: { kind: 'truncate', side: 'request' } };
  return c;
}

/** The waits of docs/api.md, "Transfers", before attempt `attempts + 1`, as [least, most] in ms. */
function documentedWait(attempts: number, retryAfter: number | undefined): [number, number] {
  const full = Math.min(60_000, 1000 * 2 ** (attempts - 1));
  const asked = (retryAfter ?? 0) * 1000;
  return [Math.max(full / 2, asked), Math.max(full, asked)];
}

/** An S3 location on s3rver (or a proxy in front of it), with its own access key (no server-side copy). */
export async function s3Location(call: Call, endpoint: string): Promise<string> {
  const { id } = await createLocation(call, {
    provider: 's3',
    secret: { access_key_id: unique('AK'), secret_access_key: 'fault-test' },
    metadata: { endpoint },
  });
  return id;
}

/** The objects under the source prefix `in/`, as seedBucket takes them. */
export const inPrefix = (objects: Record<string, Buffer>): Record<string, Buffer> =>
  Object.fromEntries(Object.entries(objects).map(([key, body]) => [`in/${key}`, body]));

/**
 * Registers every case of the table on each route, in the suite being described: the app (`app()`,
 * started in the suite's `before`) runs a worker on `clock`.
 */
export function storeFaultTable(app: () => TestApp, clock: SkippingClock, routes: Route[]): void {
  async function objectRows(jobId: string) {
    return app()
      .services.db.kysely.selectFrom('job_objects')
      .selectAll()
      .where('job_id', '=', jobId)
      .orderBy('seq')
      .execute();
  }

  /**
   * Runs the job to its end on the stopped clock: whenever nothing runs and every object left waits
   * for a retry time, each new wait is noted and the clock is moved to the earliest.
   */
  async function runToEnd(
    jobId: string,
  ): Promise<Array<{ key: string; attempts: number; wait: number; error: string }>> {
    const t = app();
    const waits: Array<{ key: string; attempts: number; wait: number; error: string }> = [];
    const noted = new Map<string, number>();
    await waitUntil(
      async () => {
        const job = await t.services.db.kysely
          .selectFrom('jobs')
          .select(['status', 'lease_owner', 'lease_expires_at'])
          .where('id', '=', jobId)
          .executeTakeFirstOrThrow();
        if (!['planning', 'running'].includes(job.status)) return true;
        const now = clock.now();
        if (job.status === 'planning') {
          // A planning attempt that failed waits with no owner until its retry time.
          if (job.lease_owner === null && job.lease_expires_at !== null && job.lease_expires_at > now) {
            clock.skipTo(Number(job.lease_expires_at));
            t.worker?.nudge();
          }
          return false;
        }
        const rows = await objectRows(jobId);
        const pending = rows.filter((r) => r.status === 'pending');
        const waiting = pending.filter((r) => Number(r.run_after) > now);
        if (
          rows.some((r) => r.status === 'running') ||
          waiting.length === 0 ||
          waiting.length < pending.length
        ) {
          return false;
        }
        for (const row of waiting) {
          if ((noted.get(row.key) ?? 0) >= row.attempts) continue;
          noted.set(row.key, row.attempts);
          waits.push({
            key: row.key,
            attempts: row.attempts,
            wait: Number(row.run_after) - Number(row.last_attempt_at),
            error: String(row.error),
          });
        }
        clock.skipTo(Math.min(...waiting.map((r) => Number(r.run_after))));
        t.worker?.nudge();
        return false;
      },
      {
        what: `job ${jobId} to end`,
        detail: async () => JSON.stringify(await objectRows(jobId)),
      },
    );
    return waits;
  }

  for (const route of routes) {
    const destination = route.name.endsWith('destination');
    const cases = CASES.filter((c) =>
      destination ? !c.sourcesOnly : c.damages === undefined || c.sourcesOnly,
    );
    for (const base of cases) {
      const c = destination ? forDestination(base) : base;
      const proven = destination ? route.proves !== undefined : route.readsChecked === true;
      const unproven = c.damages !== undefined && !proven && NOT_PROVEN;
      const noParts = c.damages?.inParts === true && route.proves?.inParts === undefined && NOT_IN_PARTS;
      const skip = route.skips?.[c.name] ?? (unproven || noParts);
      test(`${route.name}: ${c.name}`, { skip }, async () => {
        const proxy = route.proxy();
        proxy.reset();
        const inParts = route.proves?.inParts;
        // The object in parts, with a small one beside it: the least size that takes parts.
        const objects =
          c.damages?.inParts && inParts
            ? { 'big.bin': randomBytes(inParts.size), 'c.txt': Buffer.from('beside it') }
            : OBJECTS();
        const keys = Object.keys(objects);
        const { call, from, to } = await route.setup(objects);
        const faultedBefore = proxy.faulted;
        const count = c.count ?? 2;
        if (c.resetReused) {
          proxy.resetReusedNext(count);
        } else {
          const aim = c.key;
          proxy.inject(c.fault, {
            count,
            match: (r) => {
              if (!route.data(r)) return false;
              if (c.damages?.inParts && !inParts?.laterPart(r)) return false;
              if (aim === undefined) return true;
              return route.pathOf(r)?.endsWith(`/${aim}`) ?? false;
            },
          });
        }
        clock.freeze();
        let jobId: string;
        let waits: Awaited<ReturnType<typeof runToEnd>>;
        try {
          const res = await call({ method: 'POST', url: '/v1/copy', payload: { from, to, manifest: keys } });
          assert.equal(res.statusCode, 202, res.body);
          jobId = res.json().job_id;
          waits = await runToEnd(jobId);
        } finally {
          clock.thaw();
          proxy.reset();
        }
        const job = await waitFor(call, `/v1/jobs/${jobId}`);
        const failures = (await call({ method: 'GET', url: `/v1/jobs/${jobId}/failures` })).json()
          .failures as Array<{ key: string; error: string; attempts: number }>;
        const failedKeys = c.failed ?? [];
        assert.equal(
          job.status,
          failedKeys.length === 0 ? 'complete' : 'partial',
          JSON.stringify({ counts: job.counts, failures }),
        );
        assert.equal(proxy.faulted - faultedBefore, count, 'every fault injected met a request');

        // Every object: copied with the same bytes, or failed with its reason and nothing false left.
        const rows = await objectRows(jobId);
        assert.deepEqual(failures.map((f) => f.key).sort(), failedKeys);
        for (const row of rows) {
          const held = await route.read(row.key);
          const source = objects[row.key] as Buffer;
          if (failedKeys.includes(row.key)) {
            assert.equal(row.status, 'failed');
            const failure = failures.find((f) => f.key === row.key);
            assert.match(String(failure?.error), c.error, 'the failure says why');
            assert.doesNotMatch(String(failure?.error), /\n|\$response/, 'in one line, in ferry’s words');
            assert.equal(failure?.attempts, MAX_ATTEMPTS, String(failure?.error));
            assert.ok(held === undefined || held.equals(source), `${row.key}: no false object is left`);
          } else {
            assert.equal(row.status, 'succeeded', `${row.key}: ${row.error}`);
            assert.ok(held?.equals(source), `${row.key}: the destination holds the source's bytes`);
          }
        }

        // Proven by a checksum, each of them, the one retried included (docs/api.md, "Verification").
        if (c.damages) {
          assert.equal((job.counts as { size_only: number }).size_only, 0, JSON.stringify(job.counts));
          const report = await call({ method: 'GET', url: `/v1/jobs/${jobId}/report` });
          const lines = report.body
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line) as { key: string; verified?: string; verified_by?: string });
          assert.deepEqual(
            lines.map((l) => [l.key, l.verified, l.verified_by]),
            keys.map((key) => [key, 'checksum', 'md5']),
          );
        }

        // The fault made a retry (unless it was none), and every retry waited what docs/api.md says.
        if (c.harmless) {
          assert.deepEqual(waits, [], 'nothing was tried again');
        } else {
          assert.ok(waits.length > 0, 'an object was tried again');
          assert.ok(
            waits.some((w) => c.error.test(w.error)),
            `a retry after the fault says what happened: ${JSON.stringify(waits)}`,
          );
        }
        for (const w of waits) {
          const ownFault = c.retryAfter !== undefined && c.error.test(w.error);
          const [least, most] = documentedWait(w.attempts, ownFault ? c.retryAfter : undefined);
          assert.ok(
            w.wait >= least && w.wait <= Math.ceil(most),
            `${w.key} after attempt ${w.attempts} (${w.error}) waited ${w.wait} ms, not ${least}-${most}`,
          );
        }
      });
    }
  }
}
