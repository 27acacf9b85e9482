// HTTP request metrics, counted into the process's registry (src/metrics.ts). The app's one
// onResponse hook (src/http/app.ts) calls the observer after writing the request's log line.
//
// A request adds to plain numbers kept here (a count per method, route and status; a count, a sum and
// a bucket per method and route), and /metrics reads them when it is scraped. prom-client's own
// labelled children validated and hashed their labels on every observation, 5% of the server's CPU
// serving /healthz, and 4% of its CPU per request measured again (docs/performance.md, "bench/api").
// The series and their text are prom-client's (test/http/metrics.test.ts).
import {
  Counter,
  Histogram,
  type MetricObjectWithValues,
  type MetricType,
  type MetricValueWithName,
  type Registry,
} from 'prom-client';

export type ObserveRequest = (method: string, route: string, status: number, seconds: number) => void;

const BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];

interface Answered {
  labels: { method: string; route: string; status: string };
  count: number;
}

interface Timed {
  labels: { method: string; route: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last one is above the largest bound. */
  buckets: number[];
}

type Labels = 'method' | 'route';

/** A series as prom-client's registry formats it: its own labels, then the metric's (sharedLabels). */
interface Series extends MetricValueWithName<string> {
  sharedLabels: Record<string, string>;
}

// prom-client declares a metric's type as a numeric enum, but its histograms say (and its registry
// writes) 'histogram'; test/http/metrics.test.ts compares the text with prom-client's own.
const HISTOGRAM = 'histogram' as unknown as MetricType;

/**
 * A histogram whose series are read from the tallies when scraped, in prom-client's export shape:
 * getForPromString is what prom-client's registry calls to format a metric (not in its typings), so
 * test/http/metrics.test.ts checks that the text equals prom-client's own for the same observations.
 */
class TalliedHistogram extends Histogram<Labels> {
  constructor(
    private readonly metric: { name: string; help: string },
    private readonly tallies: () => Iterable<Timed>,
    registry: Registry,
  ) {
    super({ ...metric, labelNames: ['method', 'route'], buckets: BUCKETS, registers: [registry] });
  }

  /** What the registry formats as text. */
  async getForPromString(): Promise<MetricObjectWithValues<Series>> {
    const { name, help } = this.metric;
    const values: Series[] = [];
    for (const t of this.tallies()) {
      const sharedLabels = t.labels;
      let below = 0;
      BUCKETS.forEach((le, i) => {
        below += t.buckets[i] ?? 0;
        values.push({ metricName: `${name}_bucket`, labels: { le }, sharedLabels, value: below });
      });
      values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf' }, sharedLabels, value: t.count });
      values.push({ metricName: `${name}_sum`, labels: {}, sharedLabels, value: t.sum });
      values.push({ metricName: `${name}_count`, labels: {}, sharedLabels, value: t.count });
    }
    return { name, help, type: HISTOGRAM, aggregator: 'sum', values, collect: () => {} };
  }

  /** The same series as objects, as prom-client's get() gives them (labels merged). */
  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<Labels>>> {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, ...rest }) => ({
        ...rest,
        labels: { ...rest.labels, ...sharedLabels },
      })),
    };
  }
}

export function requestMetrics(registry: Registry): ObserveRequest {
  const answered = new Map<string, Answered>();
  const timed = new Map<string, Timed>();
  new Counter({
    name: 'ferry_http_requests_total',
    help: 'HTTP requests answered, by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const a of answered.values()) this.inc(a.labels, a.count);
    },
  });
  new TalliedHistogram(
    { name: 'ferry_http_request_duration_seconds', help: 'Time to answer HTTP requests, by route' },
    () => timed.values(),
    registry,
  );
  // Routes are patterns and statuses few, so the maps stay small.
  return (method, route, status, seconds) => {
    const key = `${method} ${route}`;
    const answerKey = `${key} ${status}`;
    let a = answered.get(answerKey);
    if (a === undefined) {
      a = { labels: { method, route, status: String(status) }, count: 0 };
      answered.set(answerKey, a);
    }
    a.count++;
    let t = timed.get(key);
    if (t === undefined) {
      t = { labels: { method, route }, count: 0, sum: 0, buckets: BUCKETS.map(() => 0).concat(0) };
      timed.set(key, t);
    }
    t.count++;
    t.sum += seconds;
    let i = 0;
    while (i < BUCKETS.length && seconds > (BUCKETS[i] as number)) i++;
    t.buckets[i] = (t.buckets[i] ?? 0) + 1;
  };
}

/** Bytes through PUT and GET /v1/files/… (docs/api.md, "Files through ferry"), counted as they move. */
export interface FileBytes {
  received(bytes: number): void;
  sent(bytes: number): void;
}

export function fileBytesMetrics(registry: Registry): FileBytes {
  const counter = new Counter({
    name: 'ferry_file_bytes_total',
    help: 'Bytes of files uploaded (in) and downloaded (out) through /v1/files',
    labelNames: ['direction'] as const,
    registers: [registry],
  });
  const into = counter.labels({ direction: 'in' });
  const out = counter.labels({ direction: 'out' });
  return { received: (bytes) => into.inc(bytes), sent: (bytes) => out.inc(bytes) };
}
