// Issue 27, "A soak": the CI's version of `npm run bench:soak`. The built server (`ferry serve`, one
// process, FERRY_ROLE all) on SQLite and another on PostgreSQL, side by side, each under the soak's
// bounded mixed load (bench/soak/load.ts: reads, copies and prefix jobs streamed between two s3rver
// accounts, share links fetched and revoked, sends to a local SMTP server, an event stream) for 2
// minutes, sampled from outside every 10 s and judged by the bench's own verdict (bench/soak/watch.ts).
//
// It asserts: no error (every answer as expected, no transfer, job or send failed, nothing left
// unfinished); every copy, job, share and send the server accepted ended as it should; the fds come back
// to within 5 of their count after the warm-up once the work has ended, and do not grow under load;
// RSS does not grow: after a 30 s warm-up, the largest sample of the last 30 s is at most 24 MiB above
// the largest of the first 30 s. That bound: under this load RSS climbs about 2 MiB each 10 s until a
// major collection brings it down by 25-40 MiB, so between those windows (60-80 s apart) it climbs at
// most about 16 MiB; runs on a loaded 2-core machine grew by 7 and 11 MiB, or fell. A leak of 0.5 MiB/s
// with an fd every 5 s, put into the server for a try, failed all three checks (+29 MiB, fds +13 and
// +21). Slower leaks are for the 30-minute bench (docs/performance.md, "The soak"). The event-loop
// delay is printed, not asserted: on a shared CI machine it measures the neighbours as much as ferry.
//
// The server runs with V8's young generation at one size from its start (YOUNG below). Left to itself,
// V8 doubles it when enough survives its scavenges, up to a ceiling the Node release sets: new space
// reaches 32 MiB on Node 20 and 128 MiB on Node 24. Under this load the last doubling came in the middle
// of the run: 64 to 128 MiB on Node 24 raised RSS by 30 to 60 MiB (CI, 2026-11-27; reproduced here, the
// young generation 64 MiB before each step and 128 MiB after), and 16 to 32 MiB on Node 20 took RSS to
// +22 MiB of the 24 allowed. The verdict allows for such growth (bench/soak/watch.ts), but an allowance
// of 16 to 64 MiB in a 2-minute run would hide the leak above. With the least and the most semi-space
// both Node 20's own ceiling, new space is 32 MiB from the first scavenge on every release, and the check
// keeps its strength. Production servers keep the release's own sizing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SOAK_ENV } from '../../bench/soak/load.js';
import { runSoak } from '../../bench/soak/soak.js';
import { formatVerdict, type SoakBounds, tableHeader, tableRow } from '../../bench/soak/watch.js';
import { createSchema, testDatabases } from '../support/databases.js';
import { freePort, killAll, startServe } from '../support/processes.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { TestSmtp } from '../support/smtp.js';

const MINUTES = 2;
const SAMPLE_MS = 10_000;
const MIB = 1024 * 1024;
/** V8's least and most semi-space, MiB (Node 20's ceiling; new space is two): the comment above. */
const YOUNG = 16;
const BOUNDS: SoakBounds = {
  warmupSamples: 3,
  rssGrowthBytes: 24 * MIB,
  rssGrowthRatio: 0,
  fdMargin: 5,
  loopRatio: 2,
  loopSlackMs: 10,
};

const databases = await testDatabases();

describe('the soak: 2 minutes of steady mixed load on each database at once', { concurrency: true }, () => {
  let s3: S3rverHandle;
  const cleanups: Array<() => Promise<void>> = [];

  before(async () => {
    s3 = await startS3rver();
  });

  after(async () => {
    await killAll();
    for (const cleanup of cleanups) await cleanup().catch(() => {});
    await s3?.close();
  });

  for (const database of databases) {
    test(`[${database.name}] no errors, every copy and send ends, fds and RSS do not grow`, {
      skip: database.skip ?? false,
    }, async () => {
      const smtp = await new TestSmtp().start();
      const dataDir = mkdtempSync(join(tmpdir(), 'ferry-soak-'));
      cleanups.push(async () => {
        await smtp.close();
        rmSync(dataDir, { recursive: true, force: true });
      });
      const port = await freePort();
      const env: Record<string, string> = {
        ...SOAK_ENV,
        FERRY_ROLE: 'all',
        FERRY_DATA_DIR: dataDir,
        FERRY_PORT: String(port),
        FERRY_SMTP_URL: smtp.url,
      };
      if (database.name === 'postgres') {
        const schema = await createSchema();
        cleanups.push(() => schema.drop());
        env.FERRY_DATABASE_URL = schema.url;
      }
      const server = await startServe(`ferry-${database.name}`, env, [
        `--min-semi-space-size=${YOUNG}`,
        `--max-semi-space-size=${YOUNG}`,
      ]);
      const key = readFileSync(join(dataDir, 'bootstrap-key'), 'utf8').trim();
      const rows: string[] = [];
      const result = await runSoak({
        target: {
          base: `http://127.0.0.1:${port}`,
          key,
          s3Endpoint: s3.endpoint,
          smtp,
          tag: `soak${database.name.slice(0, 2)}${randomBytes(4).toString('hex')}`,
        },
        pid: server.pid,
        durationMs: MINUTES * 60_000,
        sampleEveryMs: SAMPLE_MS,
        bounds: BOUNDS,
        onSample: (s) => rows.push(tableRow(s)),
      });
      const report = `[${database.name}]\n${tableHeader()}\n${rows.join('\n')}\n${formatVerdict(result.verdict)}`;
      console.log(report);
      const check = (name: string) => result.verdict.checks.find((c) => c.name === name);

      assert.deepEqual(result.errors, [], report);
      const { accepted, totals } = result;
      assert.ok(
        accepted.copies > 0 && accepted.jobs > 0 && accepted.shares > 0 && accepted.sends > 0,
        report,
      );
      assert.deepEqual(
        { copies: totals.copies, jobs: totals.jobs, shares: totals.shares, sends: totals.sends },
        accepted,
        report,
      );
      assert.equal(smtp.received.length, accepted.sends, report);
      for (const name of ['RSS', 'fds under load', 'fds at the end'])
        assert.equal(check(name)?.ok, true, report);
      await server.stop();
    });
  }
});
