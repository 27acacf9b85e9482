// Issue 21, finding 1, on both databases: a pattern cannot freeze ferry. `ferry serve` (FERRY_ROLE=all)
// runs as a child process against s3rver in this process, so a frozen event loop in ferry shows as a
// /healthz that does not answer, not as a stall of the test itself. With the regular expression ferry
// matched with before, the pattern (`*a` × 20 then `*b`) against 200-character names kept the
// process at full CPU for minutes, in a preview and in the worker alike. docs/api.md, "Limits".
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { createSchema } from '../support/databases.js';
import { eachDatabase } from '../support/fixtures.js';
import { apiCall, killAll, type ServeProcess, s3Location, startServe } from '../support/processes.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { readS3, s3Client, seedBucket } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

/** The pattern: every way of splitting a name of `a`s between the stars is a backtrack. */
const HOSTILE = `${'*a'.repeat(20)}*b`;
/**
 * How long a /healthz probe may take. The bound is real time in another process, so it is wide: a
 * regular expression held the process for minutes on these names, the automaton decides them in
 * milliseconds, and a loaded machine can delay any answer by a second or more.
 */
const PROBE_MS = 10_000;
/** FERRY_PATTERN_MAX_WILDCARDS of the process under test (the default is 32). */
const MAX_WILDCARDS = 24;

await eachDatabase('patterns of bounded cost', (database) => {
  let s3: S3rverHandle;
  let client: S3Client;
  let schema: Awaited<ReturnType<typeof createSchema>> | undefined;
  let dataDir: string;
  let origin: string;
  let token: string;
  let server: ServeProcess;
  let location: string;

  before(async () => {
    [s3, schema] = await Promise.all([
      startS3rver(),
      database.name === 'postgres' ? createSchema() : Promise.resolve(undefined),
    ]);
    client = s3Client(s3.endpoint);
    dataDir = mkdtempSync(join(tmpdir(), 'ferry-patterns-'));
    server = await startServe('ferry', {
      FERRY_ROLE: 'all',
      FERRY_DATA_DIR: dataDir,
      FERRY_MASTER_KEY: randomBytes(32).toString('base64'),
      FERRY_EGRESS_ALLOW: '127.0.0.1/32',
      FERRY_PATTERN_MAX_WILDCARDS: String(MAX_WILDCARDS),
      ...(schema ? { FERRY_DATABASE_URL: schema.url } : {}),
    });
    origin = server.origin;
    token = readFileSync(join(dataDir, 'bootstrap-key'), 'utf8').trim();
    location = await s3Location(origin, token, s3.endpoint, 'FERRYPATTERNS');
  });

  after(async () => {
    await killAll();
    client?.destroy();
    await s3?.close();
    await schema?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    apiCall<T>(origin, token, method, path, body);

  /** 40 objects named by 200 `a`s, but for the last letter: `b` in every tenth, the ones that match. */
  async function hostileBucket(): Promise<{ bucket: string; matching: string[]; others: string[] }> {
    const names = Array.from({ length: 40 }, (_, i) => `${'a'.repeat(196)}${String(i).padStart(3, '0')}`);
    const keys = names.map((n, i) => `${n}${i % 10 === 0 ? 'b' : 'a'}`);
    const bucket = await seedBucket(client, Object.fromEntries(keys.map((k) => [k, 'x'])));
    return {
      bucket,
      matching: keys.filter((k) => k.endsWith('b')).sort(),
      others: keys.filter((k) => !k.endsWith('b')),
    };
  }

  /**
   * Asks /healthz again and again until `work` settles, each time failing unless it answers within
   * PROBE_MS; at least once. Answers what `work` resolved to.
   */
  async function healthyWhile<T>(work: Promise<T>): Promise<T> {
    let settled = false;
    const done = work.finally(() => {
      settled = true;
    });
    let probes = 0;
    do {
      const started = performance.now();
      const res = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(PROBE_MS) }).catch(
        (err: unknown) => {
          throw new Error(
            `/healthz did not answer within ${PROBE_MS} ms (probe ${probes + 1})\n${server.log()}`,
            {
              cause: err,
            },
          );
        },
      );
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      assert.ok(performance.now() - started < PROBE_MS);
      probes++;
    } while (!settled);
    return done;
  }

  test('while a 20-wildcard preview over 200-character names is answered, /healthz answers', async () => {
    const { bucket, matching } = await hostileBucket();
    const preview = call<{ entries: { path: string }[] }>('POST', '/remove/preview', {
      path: `${location}/${bucket}/${HOSTILE}`,
    });
    const res = await healthyWhile(preview);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.deepEqual(
      res.json.entries.map((e) => e.path).sort(),
      matching.map((k) => `${bucket}/${k}`),
    );
  });

  test('a /remove with that pattern completes in the worker, removing just the matches; /healthz answers meanwhile', async () => {
    const { bucket, matching, others } = await hostileBucket();
    const accepted = await call<{ id: string }>('POST', '/remove', {
      path: `${location}/${bucket}/${HOSTILE}`,
    });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.json));
    const finished = waitUntil(
      async () => {
        const res = await call<{ status: string }>('GET', `/v1/transfers/${accepted.json.id}`);
        return ['complete', 'failed'].includes(res.json.status) ? res.json : undefined;
      },
      { what: 'the remove to finish', detail: () => server.log() },
    );
    const transfer = await healthyWhile(finished);
    assert.equal(transfer.status, 'complete', JSON.stringify(transfer));
    for (const key of matching) assert.equal(await readS3(client, bucket, key), undefined, key);
    for (const key of others.slice(0, 5)) assert.equal(String(await readS3(client, bucket, key)), 'x', key);
  });

  test('a pattern past a limit is 400 naming the limit and its setting, and nothing is queued', async () => {
    const { bucket } = await hostileBucket();
    const before = await call<{ transfers: unknown[] }>('GET', '/v1/transfers');
    const tooManyWildcards = `${location}/${bucket}/${'*a'.repeat(MAX_WILDCARDS)}*b`;
    const tooLong = `${location}/${bucket}/${'x'.repeat(1024)}*`;
    const tooManyAlternatives = `${location}/${bucket}/{1..200}-{1..57}`;
    const refusals: [string, unknown, RegExp][] = [
      [
        '/remove/preview',
        { path: tooManyWildcards },
        /^path: a pattern may have at most 24 wildcards \(FERRY_PATTERN_MAX_WILDCARDS\)/,
      ],
      ['/remove', { path: [tooManyWildcards] }, /^path: .*at most 24 wildcards/],
      ['/remove', { path: tooLong }, /^path: .*at most 1024 characters \(FERRY_PATTERN_MAX_LENGTH\)/],
      [
        '/move',
        { from: tooManyAlternatives, to: `${location}/${bucket}/out/` },
        /^from: .*at most 256 brace alternatives \(FERRY_PATTERN_MAX_ALTERNATIVES\)/,
      ],
      ['/share', { file: tooManyWildcards }, /^file: .*at most 24 wildcards/],
    ];
    for (const [url, body, message] of refusals) {
      const res = await call<{ error: number; message: string }>('POST', url, body);
      assert.equal(res.status, 400, `${url} ${JSON.stringify(res.json)}`);
      assert.deepEqual(Object.keys(res.json).sort(), ['error', 'message']);
      assert.equal(res.json.error, 400);
      assert.match(res.json.message, message, url);
    }
    // Just within the limits, the same shapes are accepted.
    const within = await call('POST', '/remove/preview', {
      path: `${location}/${bucket}/${'*a'.repeat(MAX_WILDCARDS - 1)}*b`,
    });
    assert.equal(within.status, 200, JSON.stringify(within.json));
    const after = await call<{ transfers: unknown[] }>('GET', '/v1/transfers');
    assert.equal(after.json.transfers.length, before.json.transfers.length);
  });
});
