// The request metrics read from tallies when scraped (src/http/metrics.ts, docs/performance.md
// "bench/api") must be what prom-client's own labelled counter and histogram give for the same
// observations, as text and as JSON: an upgrade of prom-client that changes how a metric is formatted
// fails here rather than on a dashboard.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { type ObserveRequest, requestMetrics } from '../../src/http/metrics.js';

/** The same two metrics, kept by prom-client itself. */
function ownMetrics(registry: Registry): ObserveRequest {
  const answered = new Counter({
    name: 'ferry_http_requests_total',
    help: 'HTTP requests answered, by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const timed = new Histogram({
    name: 'ferry_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  });
  return (method, route, status, seconds) => {
    answered.inc({ method, route, status: String(status) });
    timed.observe({ method, route }, seconds);
  };
}

const OBSERVATIONS: [string, string, number, number][] = [
  ['GET', '/healthz', 200, 0.0004],
  ['GET', '/v1/transfers/:id', 404, 0.003],
  ['GET', '/healthz', 200, 0.001],
  ['POST', '/v1/transfers', 201, 0.07],
  ['GET', '/v1/transfers/:id', 200, 0.2],
  ['GET', '/healthz', 503, 7.5],
  ['POST', '/v1/transfers', 201, 5],
  ['GET', 'unmatched', 404, 0.0099],
];

test('the tallied request metrics give the text and series prom-client’s own metrics give', async () => {
  const tallied = new Registry();
  const own = new Registry();
  const observe = [requestMetrics(tallied), ownMetrics(own)];
  assert.equal(await tallied.metrics(), await own.metrics(), 'before any request');
  for (const [i, o] of OBSERVATIONS.entries()) {
    for (const f of observe) f(...o);
    if (i === 3) assert.equal(await tallied.metrics(), await own.metrics(), 'halfway');
  }
  const text = await tallied.metrics();
  assert.match(
    text,
    /ferry_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/healthz"\} 3/,
  );
  assert.equal(text, await own.metrics());
  // As JSON (not served; read by tests and tools), the same series with the same values.
  const json = async (registry: Registry) =>
    (await registry.getMetricsAsJSON()).map(({ name, help, type, values }) => ({
      name,
      help,
      type,
      // prom-client's own adds exemplar: null to each value (exemplars are off).
      values: values.map((value) => ({ ...value, exemplar: undefined })),
    }));
  assert.deepEqual(await json(tallied), await json(own));
});
