// bench/soak (issue 27): the built server (bin/ferry.js serve, one process, FERRY_ROLE all) under a
// bounded, steady mixed load for a long time (bench/soak/load.ts), sampled from outside each minute
// (bench/soak/watch.ts): RSS, open fds, event-loop delay, requests and errors. Prints a row a minute and
// a verdict; exits 1 when something grows (the last third of the run against the first, after a
// two-minute warm-up) or when there was any error. test/engine/soak.test.ts runs the same for 2 minutes.
//   npm run bench:soak [-- --minutes 30] [--postgres] [--sample-seconds 60] [--control] [--skip-build]
// --control starts a second ferry beside it on the same database kind that gets no load, and prints its
// event-loop delay and RSS in two more columns: on a shared machine the delay is mostly the wait for a
// core, and the idle process shows how much.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { createSchema } from '../../test/support/databases.js';
import { TestSmtp } from '../../test/support/smtp.js';
import { median } from '../support/figures.js';
import { buildDist, startFerry, startS3rverProcess } from '../support/processes.js';
import { DEFAULT_PLAN, SOAK_ENV } from './load.js';
import { runSoak } from './soak.js';
import { BENCH_BOUNDS, formatVerdict, sampleProcess, tableHeader, tableRow } from './watch.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    postgres: { type: 'boolean', default: false },
    'sample-seconds': { type: 'string', default: '60' },
    control: { type: 'boolean', default: false },
    'skip-build': { type: 'boolean', default: false },
  },
});
const MINUTES = Number(values.minutes);
const SAMPLE_MS = Number(values['sample-seconds']) * 1000;
const SAMPLES = Math.floor((MINUTES * 60_000) / SAMPLE_MS);
// The warm-up: two minutes, or a fifth of a shorter run.
const WARMUP = Math.max(1, Math.round(Math.min(120_000, (MINUTES * 60_000) / 5) / SAMPLE_MS));
if (!(SAMPLE_MS > 0) || SAMPLES < WARMUP + 3)
  throw new Error(`--minutes ${MINUTES} gives ${SAMPLES} samples: at least ${WARMUP + 3} are needed`);

const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();

if (!values['skip-build']) buildDist();

const env: Record<string, string> = { ...SOAK_ENV, FERRY_MASTER_KEY: randomBytes(32).toString('base64') };
const schemas: Array<Awaited<ReturnType<typeof createSchema>>> = [];
/** A fresh PostgreSQL schema for one process (test/support/databases.ts), dropped at the end. */
async function database(): Promise<Record<string, string>> {
  if (!values.postgres) return {};
  const schema = await createSchema();
  schemas.push(schema);
  return { FERRY_DATABASE_URL: schema.url };
}
Object.assign(env, await database());

const smtp = await new TestSmtp().start();
env.FERRY_SMTP_URL = smtp.url;
const s3 = await startS3rverProcess();
const ferry = await startFerry({ env });
const control = values.control ? await startFerry({ env: { ...env, ...(await database()) } }) : undefined;
const controlColumns = control ? ['idle loop p99 ms', 'idle RSS MiB'] : [];
const controlP99: number[] = [];
let failed = true;
try {
  const p = DEFAULT_PLAN;
  console.log(`soak: ${MINUTES} min on ${values.postgres ? 'PostgreSQL' : 'SQLite'}, ferry pid ${ferry.pid}`);
  console.log(
    `load: ${p.readsPerSecond} reads/s; a copy every ${p.copyEveryMs / 1000} s (single and ${p.jobObjects}-object prefix job in turn, ${p.objectBytes / 1024} KiB objects, streamed between two s3rver accounts); a share + download + revoke every ${p.shareEveryMs / 1000} s; a send every ${p.sendEveryMs / 1000} s; one event stream`,
  );
  console.log(`machine: ${cpus().length} cores, Node ${process.version}`);
  console.log(`before: ${uptime()}\n`);
  console.log(tableHeader(controlColumns));
  const result = await runSoak({
    target: {
      base: ferry.base,
      key: ferry.key,
      s3Endpoint: s3.endpoint,
      smtp,
      tag: `soak${randomBytes(4).toString('hex')}`,
    },
    pid: ferry.pid,
    durationMs: MINUTES * 60_000,
    sampleEveryMs: SAMPLE_MS,
    bounds: { ...BENCH_BOUNDS, warmupSamples: WARMUP },
    onSample: (s) => {
      if (!control) return console.log(tableRow(s));
      // The idle process, read at the same moment: its delay covers the same minute.
      sampleProcess(control.pid, control.base).then(
        (c) => {
          controlP99.push(c.loopP99Ms);
          console.log(tableRow(s, [c.loopP99Ms.toFixed(1), (c.rssBytes / 1024 / 1024).toFixed(1)]));
        },
        (err: unknown) => console.log(tableRow(s, [`(${(err as Error).message})`, ''])),
      );
    },
  });
  const total = result.totals;
  console.log(
    `\ntotal: ${total.requests} requests, ${total.copies} copies, ${total.jobs} prefix jobs, ${total.shares} share downloads, ${total.sends} sends (${smtp.received.length} mails received), ${total.events} events; ${result.errors.length} errors`,
  );
  for (const e of result.errors.slice(0, 20)) console.log(`  error: ${e}`);
  console.log(`after: ${uptime()}\n`);
  console.log(formatVerdict(result.verdict));
  if (control)
    console.log(
      `event-loop delay p99, median of the minutes: ${median(result.samples.map((x) => x.loopP99Ms)).toFixed(1)} ms under the load, ${median(controlP99).toFixed(1)} ms in the idle process beside it`,
    );
  failed = !result.verdict.ok;
} finally {
  await ferry.close();
  await control?.close();
  await s3.close();
  await smtp.close();
  for (const schema of schemas) await schema.drop();
}
process.exit(failed ? 1 : 0);
