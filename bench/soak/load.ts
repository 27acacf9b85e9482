// The soak's load (issue 27): a bounded, steady mix at fixed rates, never flat-out, against one ferry
// process whose workers copy between two s3rver accounts (so every byte streams through ferry) and
// mail through a local SMTP server. Each lane fires on its own timer whether or not the last one has
// finished, so a server that slows down sees the same arrivals and falls behind visibly:
// - reads: GET /v1/locations, POST /v1/list, GET /v1/jobs, /v1/transfers, /v1/sends and /v1/shares in turn;
// - copies: a single object copy and a prefix job (a few objects) in turn, each followed to its end by
//   polling GET /v1/transfers/{id} or /v1/jobs/{id};
// - shares: POST /share, the file fetched through its /s/ URL (every byte counted), then the link revoked;
// - sends: POST /send to a new address, followed to `sent` and to the SMTP server's receipt;
// - one event stream (GET /v1/events) open throughout, opened again if the server ends it.
// The rates stay under the default rate limits of docs/api.md ("Rate limits and caps"): copies at 20 a
// minute (limit 30), shares at 10 (60), lists at 50 (600), sends at 4 (60). Only the recipients'
// hourly limit (200) is lower than a long run's sends: the soak's server raises it
// (FERRY_SEND_RECIPIENTS_PER_HOUR, SOAK_ENV).
//
// Everything the load did not expect counts as an error, with a line saying what: an answer with
// another status, no answer, a transfer, job or send that failed, a download of the wrong length, an
// event stream that ended, work still running when the drain gives up.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type EventClient, openEvents } from '../../test/support/events.js';
import type { TestSmtp } from '../../test/support/smtp.js';
import { seedBucket } from '../support/s3.js';

export interface LoadCounts {
  /** HTTP requests the load made (polling included), answered or not. */
  requests: number;
  errors: number;
  /** Single copies, prefix jobs, share downloads and sends that ended as expected. */
  copies: number;
  jobs: number;
  shares: number;
  sends: number;
  /** Events read from the event stream. */
  events: number;
}

export interface Accepted {
  copies: number;
  jobs: number;
  shares: number;
  sends: number;
}

export interface LoadPlan {
  readsPerSecond: number;
  copyEveryMs: number;
  shareEveryMs: number;
  sendEveryMs: number;
  /** Objects in each prefix job. */
  jobObjects: number;
  objectBytes: number;
  /** Work in flight per lane beyond which a tick is skipped and counted as an error (the server fell behind). */
  maxInFlight: number;
}

export const DEFAULT_PLAN: LoadPlan = {
  readsPerSecond: 5,
  copyEveryMs: 3000,
  shareEveryMs: 6000,
  sendEveryMs: 15_000,
  jobObjects: 5,
  objectBytes: 64 * 1024,
  maxInFlight: 20,
};

/** Settings of the soak's ferry process besides its database and ports. */
export const SOAK_ENV: Record<string, string> = {
  FERRY_EGRESS_ALLOW: '127.0.0.1/32', // s3rver on loopback
  FERRY_SEND_RECIPIENTS_PER_HOUR: '100000',
};

export interface Target {
  base: string;
  key: string;
  s3Endpoint: string;
  smtp: TestSmtp;
  /** Makes the bucket names unique, so that several runs can share one s3rver. */
  tag: string;
}

const SHARED_FILE = 'share/file.bin';
const SINGLE_OBJECTS = 10;
const JOB_PREFIXES = 4;
/** Destinations are reused in turn, so s3rver's disk holds a bounded amount however long the run. */
const DESTINATIONS = 40;

export interface Load {
  /** The counters since the start; counts() - previous gives an interval. */
  counts(): LoadCounts;
  /** Copies, prefix jobs, share links and sends the server accepted; each should end as counted. */
  accepted: Accepted;
  errors: string[];
  /** Stops the timers, waits for the work in flight to end (at most `drainMs`), closes the stream. */
  stop(drainMs?: number): Promise<void>;
}

const zero = (): LoadCounts => ({
  requests: 0,
  errors: 0,
  copies: 0,
  jobs: 0,
  shares: 0,
  sends: 0,
  events: 0,
});

export function minus(a: LoadCounts, b: LoadCounts): LoadCounts {
  const out = zero();
  for (const k of Object.keys(out) as (keyof LoadCounts)[]) out[k] = a[k] - b[k];
  return out;
}

/** The buckets, objects and the two locations (two accounts of one s3rver: copies stream through ferry). */
export async function prepare(target: Target, plan: LoadPlan = DEFAULT_PLAN): Promise<void> {
  const body = (key: string) => `${key}\n${'x'.repeat(plan.objectBytes - key.length - 1)}`;
  const keys = [
    SHARED_FILE,
    ...Array.from({ length: SINGLE_OBJECTS }, (_, i) => `one/${i}.bin`),
    ...Array.from({ length: JOB_PREFIXES * plan.jobObjects }, (_, i) => `batch/${i % JOB_PREFIXES}/${i}.bin`),
  ];
  await seedBucket(target.s3Endpoint, `${target.tag}-src`, keys, { body, concurrency: 8 });
  await seedBucket(target.s3Endpoint, `${target.tag}-dst`, [], {});
  for (const [label, access] of [
    ['src', 'soak-a'],
    ['dst', 'soak-b'],
  ] as const) {
    const res = await fetch(`${target.base}/v1/locations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        provider: 's3',
        label,
        secret: { access_key_id: access, secret_access_key: `${access}-secret` },
        metadata: { endpoint: target.s3Endpoint },
      }),
    });
    if (res.status !== 201) throw new Error(`POST /v1/locations: ${res.status} ${await res.text()}`);
  }
}

/** Starts the load on a prepared target. */
export function startLoad(target: Target, plan: LoadPlan = DEFAULT_PLAN): Load {
  const counts = zero();
  const accepted: Accepted = { copies: 0, jobs: 0, shares: 0, sends: 0 };
  const errors: string[] = [];
  const inFlight = { copies: 0, shares: 0, sends: 0, reads: 0 };
  let stopping = false;
  const src = `${target.tag}-src`;
  const dst = `${target.tag}-dst`;

  const fail = (what: string) => {
    counts.errors++;
    errors.push(what);
  };

  /** One request; its answer's text, or undefined (an error counted) when the status is not `expect`. */
  async function call(
    method: string,
    path: string,
    expect: number,
    body?: unknown,
  ): Promise<string | undefined> {
    counts.requests++;
    try {
      const res = await fetch(`${target.base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${target.key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      if (res.status !== expect) {
        fail(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
        return undefined;
      }
      return text;
    } catch (err) {
      fail(`${method} ${path}: no answer (${(err as Error).message})`);
      return undefined;
    }
  }

  /** Polls `path` until `status` is one of `done` (true) or `failed` (false, an error counted). */
  async function follow(path: string, done: string[], failed: string[]): Promise<boolean> {
    for (;;) {
      await sleep(250);
      const text = await call('GET', path, 200);
      if (text === undefined) return false;
      const view = JSON.parse(text) as { status: string; error?: string };
      if (done.includes(view.status)) return true;
      if (failed.includes(view.status)) {
        fail(`${path} ended ${view.status}: ${view.error ?? ''}`);
        return false;
      }
    }
  }

  const reads = [
    () => call('GET', '/v1/locations', 200),
    () => call('POST', '/v1/list', 200, { name: 'src', path: `${src}/one` }),
    () => call('GET', '/v1/jobs?limit=20', 200),
    () => call('GET', '/v1/transfers?limit=20', 200),
    () => call('GET', '/v1/sends?limit=20', 200),
    () => call('GET', '/v1/shares?limit=20', 200),
  ];

  let copyTurn = 0;
  async function copy(): Promise<void> {
    const n = copyTurn++;
    const slot = Math.floor(n / 2) % DESTINATIONS;
    if (n % 2 === 0) {
      const text = await call('POST', '/v1/copy', 202, {
        from: `src:${src}/one/${slot % SINGLE_OBJECTS}.bin`,
        to: `dst:${dst}/one/${slot}.bin`,
      });
      if (text === undefined) return;
      const { id } = JSON.parse(text) as { id: string };
      accepted.copies++;
      if (await follow(`/v1/transfers/${id}`, ['complete'], ['failed', 'canceled'])) counts.copies++;
    } else {
      const text = await call('POST', '/v1/copy', 202, {
        from: `src:${src}/batch/${slot % JOB_PREFIXES}/`,
        to: `dst:${dst}/batch/${slot}/`,
      });
      if (text === undefined) return;
      const { job_id } = JSON.parse(text) as { job_id: string };
      accepted.jobs++;
      if (await follow(`/v1/jobs/${job_id}`, ['complete'], ['partial', 'failed', 'canceled'])) counts.jobs++;
    }
  }

  async function share(): Promise<void> {
    const text = await call('POST', '/share', 201, {
      file: `src/${src}/${SHARED_FILE}`,
      literal: true,
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
    });
    if (text === undefined) return;
    const { id, url } = JSON.parse(text) as { id: string; url: string };
    accepted.shares++;
    const path = new URL(url).pathname;
    counts.requests++;
    try {
      const res = await fetch(`${target.base}${path}`);
      const bytes = (await res.arrayBuffer()).byteLength;
      if (res.status !== 200 || bytes !== plan.objectBytes)
        fail(`GET ${path.slice(0, 8)}…: ${res.status}, ${bytes} bytes of ${plan.objectBytes}`);
      else counts.shares++;
    } catch (err) {
      fail(`GET /s/…: no answer (${(err as Error).message})`);
    }
    await call('DELETE', `/v1/shares/${id}`, 204);
  }

  let sendTurn = 0;
  async function send(): Promise<void> {
    const to = `soak-${target.tag}-${sendTurn++}-${randomBytes(3).toString('hex')}@example.com`;
    const text = await call('POST', '/send', 202, {
      source: `src/${src}/${SHARED_FILE}`,
      literal: true,
      to,
      text: 'the soak',
    });
    if (text === undefined) return;
    const { id } = JSON.parse(text) as { id: string };
    accepted.sends++;
    if (!(await follow(`/v1/sends/${id}`, ['sent'], ['failed', 'canceled']))) return;
    // `sent` is recorded after the server accepted the message, so it is there already.
    if (target.smtp.received.some((r) => r.envelope.to.includes(to))) counts.sends++;
    else fail(`send ${id}: sent, but the SMTP server has no message to ${to}`);
  }

  /** Runs `work` every `everyMs`, each on its own (never awaited by the timer). */
  function lane(everyMs: number, kind: keyof typeof inFlight, work: () => Promise<unknown>) {
    return setInterval(() => {
      if (inFlight[kind] >= plan.maxInFlight) {
        fail(`${kind}: ${inFlight[kind]} still in flight, a tick skipped (the server fell behind)`);
        return;
      }
      inFlight[kind]++;
      work()
        .catch((err: unknown) => fail(`${kind}: ${(err as Error).message}`))
        .finally(() => inFlight[kind]--);
    }, everyMs);
  }

  let readTurn = 0;
  const timers = [
    lane(1000 / plan.readsPerSecond, 'reads', () =>
      (reads[readTurn++ % reads.length] as () => Promise<unknown>)(),
    ),
    lane(plan.copyEveryMs, 'copies', copy),
    lane(plan.shareEveryMs, 'shares', share),
    lane(plan.sendEveryMs, 'sends', send),
  ];

  // The event stream: open throughout; its events are counted as they come.
  let stream: EventClient | undefined;
  const streaming = (async () => {
    while (!stopping) {
      counts.requests++;
      try {
        stream = await openEvents(target.base, target.key);
      } catch (err) {
        fail(`GET /v1/events: no answer (${(err as Error).message})`);
        await sleep(1000);
        continue;
      }
      if (stream.status !== 200) {
        fail(`GET /v1/events: ${stream.status} ${stream.body.slice(0, 200)}`);
        await sleep(1000);
        continue;
      }
      const client = stream;
      // The client keeps every event it read: count them and let them go.
      const take = () => {
        counts.events += client.events.length;
        client.events.length = 0;
        client.comments.length = 0;
      };
      const poll = setInterval(take, 1000);
      let broke = '';
      await client.ended.catch((err: unknown) => {
        broke = ` (${(err as Error).message})`;
      });
      clearInterval(poll);
      take();
      if (!stopping) fail(`GET /v1/events: the stream ended${broke}`);
    }
  })();

  return {
    counts: () => ({ ...counts }),
    accepted,
    errors,
    async stop(drainMs = 120_000) {
      for (const t of timers) clearInterval(t);
      const deadline = Date.now() + drainMs;
      while (inFlight.copies + inFlight.shares + inFlight.sends + inFlight.reads > 0 && Date.now() < deadline)
        await sleep(100);
      const left = Object.entries(inFlight).filter(([, n]) => n > 0);
      if (left.length > 0)
        fail(
          `work unfinished ${drainMs / 1000} s after the load stopped: ${left.map(([k, n]) => `${n} ${k}`).join(', ')}`,
        );
      stopping = true;
      stream?.close();
      await streaming;
    },
  };
}
