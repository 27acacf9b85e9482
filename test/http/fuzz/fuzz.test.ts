// The HTTP fuzzer (docs/api.md, "Errors" and "Limits"): generated requests for every route in
// /openapi.json, and for random paths and methods, on both databases, each checked for
//   - no 5xx: nothing a caller sends is an internal error, and the fixtures' store (s3rver) is up, so no
//     provider failure excuses a 502 or 503;
//   - the standard error shape: every answer >= 400 is exactly {error: <its status>, message: <string>}
//     (the ambiguous-name 409 has its own documented shape), with a message of bounded length;
//   - 415 for a body that is not application/json (or has no Content-Type) on a route that takes one;
//   - no state change after a rejected request: the rows of the main tables are the same before and
//     after any answer >= 400;
//   - bounded time: no answer takes longer than ANSWER_MS;
// and afterwards the process is healthy: /healthz answers 200 and a normal listing still works.
// 429 in the standard shape is a valid answer (rate limits, docs/api.md "Limits").
//
//   FERRY_FUZZ_SEED   the seed (default 21, fixed so that CI runs the same requests every time)
//   FERRY_FUZZ_RUNS   requests per database, spread over the routes (default 800)
//   FERRY_FUZZ_COLLECT=1  do not stop at a route's first failure: ignore each failure once found (by
//                     route and cause) and go on, printing every distinct shrunk counterexample
//
// The long run of issue 21 (20,000 requests per database, no 5xx):
//   FERRY_FUZZ_RUNS=20000 FERRY_TEST_TIMEOUT_MS=3600000 FERRY_TEST_FILE_LIMIT_S=3600 npm test -- http/fuzz
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { startTestApp } from '../../support/app.js';
import { type TestDatabase, testDatabases } from '../../support/databases.js';
import { Deep, type FuzzRequest, randomRequests, requestsFor, routesOf, toJson } from './arbitraries.js';
import { BUCKET, LABELS, World } from './world.js';

const SEED = Number(process.env.FERRY_FUZZ_SEED ?? 21);
const RUNS = Number(process.env.FERRY_FUZZ_RUNS ?? 800);
const COLLECT = process.env.FERRY_FUZZ_COLLECT === '1';
/**
 * The longest an answer may take (the event loop is never held for long: docs/api.md, "Limits"). It is
 * real time, so it is only for a cost that explodes (a pattern or a text read in seconds to minutes);
 * a loaded machine can hold any answer for a second or two.
 */
const ANSWER_MS = 10_000;
/** A request that has not been answered by then is a failure of its own. */
const HANG_MS = 15_000;
/** The longest error message: a message quotes at most a short prefix of what was sent. */
const MESSAGE_CHARS = 1_000;

// The routes come from a throwaway app: the OpenAPI description is the same on both databases.
const [sqlite] = await testDatabases();
const scratch = await startTestApp(sqlite ?? { name: 'sqlite', skip: undefined });
const openapi = (await scratch.request({ method: 'GET', url: '/openapi.json' })).json();
await scratch.close();
const routes = routesOf(openapi);
const perRoute = Math.max(1, Math.ceil(RUNS / (routes.length + 1)));

interface Answer {
  status: number;
  body: string;
  contentType: string | undefined;
  ms: number;
  /** Error lines ferry logged while answering: the text, and its kind without the values in it. */
  errors: Array<{ text: string; cause: string }>;
}

async function send(world: World, req: FuzzRequest): Promise<Answer> {
  const headers: Record<string, string> = {};
  const key = {
    key: `Bearer ${world.token}`,
    none: undefined,
    garbage: 'Bearer fry_not-a-key',
    revoked: `Bearer ${world.revokedToken}`,
    basic: 'Basic YTpi',
  }[req.auth];
  if (key) headers.authorization = key;
  let payload: string | Buffer | undefined;
  if (req.body.kind === 'json') payload = world.fill(toJson(req.body.value));
  else if (req.body.kind === 'text') payload = world.fill(req.body.text);
  else if (req.body.kind === 'bytes') payload = Buffer.from(req.body.hex, 'hex');
  const type =
    req.contentType === undefined ? (payload === undefined ? null : 'application/json') : req.contentType;
  if (type !== null) headers['content-type'] = type;
  const logged = world.t.logs.lines.length;
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const answered = (async () => {
    // As a stream: an event stream (GET /v1/events) never ends; its headers are its answer.
    const res = await world.t.app.inject({
      method: req.method as 'GET',
      url: world.fill(req.url),
      headers,
      payloadAsStream: true,
      ...(payload === undefined ? {} : { payload }),
    });
    const stream = res.stream();
    if (String(res.headers['content-type']).startsWith('text/event-stream')) {
      stream.destroy();
      return { status: res.statusCode, body: '', contentType: 'text/event-stream' };
    }
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.from(chunk));
    const contentType = res.headers['content-type'];
    return {
      status: res.statusCode,
      body: Buffer.concat(chunks).toString('utf8'),
      contentType: typeof contentType === 'string' ? contentType : undefined,
    };
  })();
  const res = await Promise.race([
    answered,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${HANG_MS} ms`)), HANG_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  const errors = world.t.logs.lines
    .slice(logged)
    .filter((line) => /"level":(50|60)/.test(line))
    .map((line) => {
      const entry = JSON.parse(line) as { msg?: string; err?: { message?: string; type?: string } };
      const message = entry.err?.message ?? '';
      // The first words of the message name the failure; what follows quotes the input.
      const words = message
        .split(/\s+/)
        .slice(0, 3)
        .join(' ')
        .replace(/[^A-Za-z ]/g, '');
      return {
        text: `${entry.msg}: ${entry.err?.type ?? ''} ${message}`.slice(0, 200),
        cause: `${entry.err?.type ?? entry.msg} ${words}`,
      };
    });
  return {
    status: res.status,
    body: res.body,
    contentType: res.contentType,
    ms: performance.now() - started,
    errors,
  };
}

interface Problem {
  /** What went wrong, independent of the values sent: the key failures are grouped by. */
  cause: string;
  detail: string;
}

/** The ambiguous-name 409 (docs/api.md, "Addressing a location"). */
function isAmbiguous(status: number, body: Record<string, unknown>): boolean {
  return status === 409 && typeof body.error === 'string' && Array.isArray(body.candidates);
}

function checkShape(req: FuzzRequest, answer: Answer): Problem[] {
  if (answer.status < 400 || req.method === 'HEAD') return [];
  // Share links are pages for people: their errors are HTML by design (docs/api.md, "Share links").
  if (/^\/s(\/|$)/.test(req.url) && /^text\/html/.test(answer.contentType ?? '')) return [];
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return [{ cause: `${answer.status} not JSON`, detail: answer.body.slice(0, 200) }];
  }
  const fields = body && typeof body === 'object' ? Object.keys(body).sort() : [];
  const object = (body ?? {}) as Record<string, unknown>;
  if (isAmbiguous(answer.status, object)) return [];
  const problems: Problem[] = [];
  if (
    fields.join(',') !== 'error,message' ||
    object.error !== answer.status ||
    typeof object.message !== 'string'
  ) {
    problems.push({
      cause: `${answer.status} shape {${fields.join(',')}}`,
      detail: answer.body.slice(0, 300),
    });
  } else if ((object.message as string).length > MESSAGE_CHARS) {
    problems.push({
      cause: `${answer.status} message over ${MESSAGE_CHARS} characters`,
      detail: `${(object.message as string).length} characters: ${(object.message as string).slice(0, 200)}`,
    });
  }
  return problems;
}

/**
 * A body that is not JSON answers 415 (docs/api.md, "Errors"): a Content-Type other than
 * application/json, or none at all, on a route that takes a body, with a valid key.
 */
function checkMediaType(req: FuzzRequest, answer: Answer, takesBody: boolean): Problem[] {
  if (!takesBody || req.auth !== 'key' || req.body.kind === 'none') return [];
  // An empty body is no body, whatever its type (docs/api.md, "Errors"): the route says what is missing.
  if (
    (req.body.kind === 'text' && req.body.text === '') ||
    (req.body.kind === 'bytes' && req.body.hex === '')
  )
    return [];
  const type = req.contentType === undefined ? 'application/json' : req.contentType;
  const media = type?.split(';')[0]?.trim().toLowerCase();
  if (media === 'application/json' || [413, 415, 429].includes(answer.status)) return [];
  // The router answers a URL it cannot route before any body is looked at: broken percent-encoding
  // (400) or a path parameter past its length (404, "nothing is at").
  if (routerRefused(answer)) return [];
  return [
    {
      cause: `${answer.status}, not 415, for a body that is not application/json`,
      detail: `Content-Type ${type === null ? 'none' : JSON.stringify(type)}: ${answer.body.slice(0, 200)}`,
    },
  ];
}

function routerRefused(answer: Answer): boolean {
  let message = '';
  try {
    message = String((JSON.parse(answer.body) as { message?: unknown }).message ?? '');
  } catch {
    return false;
  }
  return (
    (answer.status === 400 && /is not valid percent-encoded UTF-8/.test(message)) ||
    (answer.status === 404 && message.startsWith('nothing is at '))
  );
}

/** Sends one request and checks everything about its answer; the world is healed afterwards. */
async function exercise(
  world: World,
  req: FuzzRequest,
  state: { last: Record<string, string> },
  takesBody: boolean,
) {
  world.clock.advance(2_100);
  const t0 = performance.now();
  const problems: Problem[] = [];
  let answer: Answer;
  try {
    answer = await send(world, req);
  } catch (err) {
    return [{ cause: 'no answer', detail: (err as Error).message }];
  }
  if (answer.status >= 500) {
    problems.push({
      cause: `${answer.status} ${answer.errors[0]?.cause ?? ''}`.trim(),
      detail: `${answer.body.slice(0, 200)} ${answer.errors.map((e) => e.text).join(' | ')}`,
    });
  }
  const shape = checkShape(req, answer);
  problems.push(...shape);
  // A request refused before its body is read for another reason (a bad URL) says nothing of 415.
  if (shape.length === 0) problems.push(...checkMediaType(req, answer, takesBody));
  if (answer.ms > ANSWER_MS) {
    problems.push({ cause: 'slow answer', detail: `${Math.round(answer.ms)} ms, status ${answer.status}` });
  }
  if (answer.status >= 400) {
    const now = await world.snapshot();
    const changed = Object.keys(now).filter((table) => now[table] !== state.last[table]);
    if (changed.length > 0) {
      problems.push({
        cause: `state changed by a ${answer.status}: ${changed.join(', ')}`,
        detail: answer.body.slice(0, 200),
      });
    }
    state.last = now;
  } else {
    // Only location writes can change the fixtures heal() restores.
    if (req.method !== 'GET' && req.url.includes('locations')) await world.heal();
    state.last = await world.snapshot();
  }
  if (process.env.FERRY_FUZZ_TRACE === '1') {
    process.stderr.write(
      `${req.route} ${answer.status} ${Math.round(answer.ms)} ms, ${Math.round(performance.now() - t0)} ms in all\n`,
    );
  }
  return problems;
}

/** A property over `requests` that fails on any problem whose cause is not in `known`. */
interface Run {
  world: World;
  state: { last: Record<string, string> };
  /** Whether the route takes a JSON body (so a body of another type is 415). */
  takesBody: boolean;
}

function property({ world, state, takesBody }: Run, requests: fc.Arbitrary<FuzzRequest>, known: Set<string>) {
  return fc.asyncProperty(requests, async (req) => {
    const problems = (await exercise(world, req, state, takesBody)).filter(
      (p) => !known.has(`${req.route} ${p.cause}`),
    );
    if (problems.length > 0) {
      const [first] = problems;
      throw Object.assign(new Error(`${req.route}: ${first?.cause}\n${first?.detail}`), {
        cause: `${req.route} ${first?.cause}`,
      });
    }
  });
}

/** A short, printable form of a generated value: long strings cut, deep nesting counted. */
function preview(value: unknown, depth = 0): string {
  if (typeof value === 'string') {
    const cut = value.length > 120 ? `${value.slice(0, 40)}…(${value.length} chars)` : value;
    return JSON.stringify(cut);
  }
  if (value instanceof Deep) return `<${value.depth} nested ${value.object ? 'objects' : 'arrays'}>`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? String(value);
  if (Array.isArray(value)) return `[${value.map((v) => preview(v, depth + 1)).join(',')}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${JSON.stringify(k)}:${preview(v, depth + 1)}`)
    .join(',')}}`;
}

function describeRequest(req: FuzzRequest): string {
  const text = preview(req);
  return text.length > 1500 ? `${text.slice(0, 1500)}…` : text;
}

async function fuzz(run: Run, name: string, requests: fc.Arbitrary<FuzzRequest>, seed: number) {
  const known = new Set<string>();
  const found: string[] = [];
  for (;;) {
    const result = await fc.check(property(run, requests, known), {
      seed,
      numRuns: perRoute,
      // Shrinking replays requests; a few hundred are enough for a readable counterexample.
      maxSkipsPerRun: 10,
      endOnFailure: false,
      interruptAfterTimeLimit: 60_000,
    });
    if (!result.failed) break;
    const error = result.errorInstance as Error & { cause?: string };
    const [req] = result.counterexample ?? [];
    found.push(`${error.message}\n  counterexample: ${req ? describeRequest(req) : '?'}`);
    if (!COLLECT || typeof error.cause !== 'string' || known.has(error.cause) || known.size >= 8) break;
    known.add(error.cause);
  }
  if (COLLECT && found.length > 0) {
    process.stdout.write(`\n### ${name}\n${found.map((f) => `- ${f}`).join('\n')}\n`);
  }
  assert.equal(found.length, 0, `${name}: the fuzzer found\n${found.join('\n')}`);
}

// Past node's default test timeout for long runs (FERRY_FUZZ_RUNS=20000).
const TIMEOUT_MS = Math.max(120_000, RUNS * 250);

for (const database of await testDatabases()) {
  describe(`HTTP fuzzer [${database.name}]`, { skip: database.skip ?? false, timeout: TIMEOUT_MS }, () =>
    fuzzDatabase(database),
  );
}

function fuzzDatabase(database: TestDatabase): void {
  let world: World;
  const state = { last: {} as Record<string, string> };
  before(async () => {
    world = await World.start(database);
    state.last = await world.snapshot();
  });
  after(() => world.close());

  routes.forEach((route, i) => {
    const name = `${route.method} ${route.path}`;
    test(`${name}: no 5xx, standard errors, nothing changed by a rejection`, { timeout: TIMEOUT_MS }, () =>
      fuzz({ world, state, takesBody: route.body !== undefined }, name, requestsFor(route), SEED + i),
    );
  });

  test('random paths and methods: no 5xx, standard errors', { timeout: TIMEOUT_MS }, () =>
    fuzz({ world, state, takesBody: false }, 'random', randomRequests(routes), SEED + routes.length),
  );

  test('the process is healthy afterwards: /healthz 200 and a listing works', async () => {
    const health = await world.t.request({ method: 'GET', url: '/healthz', token: null });
    assert.equal(health.statusCode, 200, health.body);
    const list = await world.call('POST', '/v1/list', { name: LABELS.a, path: `${BUCKET}/` });
    assert.equal(list.statusCode, 200, list.body);
    assert.ok((list.json().entries as unknown[]).length > 0, list.body);
  });
}
