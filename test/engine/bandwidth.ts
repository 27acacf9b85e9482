// Bandwidth caps across processes (docs/api.md, "Bandwidth"), run by bandwidth-{sqlite,postgres}.test.ts:
// one file per database. Two `ferry serve` child processes on one database (one SQLite file, or one
// PostgreSQL schema) copy from s3rver to s3rver under different access keys (different accounts, so
// every byte streams through ferry):
// - a bulk copy with `bandwidth_limit` whose objects run concurrently in both processes moves its
//   bytes at the cap within 10% over about 28 s (the job's one bucket is shared through the database);
// - the same copy without a cap runs more than three times faster (the cap, not s3rver, slowed it);
// - with FERRY_WORKSPACE_BANDWIDTH, two jobs of one workspace, both processes running them, move
//   their bytes together at the workspace's cap within 10%.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createSchema, testDatabases } from '../support/databases.js';
import { unique } from '../support/fixtures.js';
import {
  apiCall,
  type FerryProcess,
  freePort,
  killAll,
  s3Location,
  startServe,
} from '../support/processes.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { readS3, s3Client } from '../support/transfers.js';

const MiB = 1024 * 1024;
/** The job's cap: 8 objects of 3.5 MiB at 1 MiB/s take about 28 s. */
const JOB_CAP = MiB;
const JOB_OBJECTS = 8;
const JOB_OBJECT_SIZE = 3.5 * MiB;
/** The workspace's cap: two jobs of 4 objects of 2 MiB at 1 MiB/s take about 16 s. */
const WORKSPACE_CAP = MiB;
const WS_OBJECTS = 4;
const WS_OBJECT_SIZE = 2 * MiB;

interface JobView {
  status: string;
  started_at?: string;
  finished_at?: string;
  bytes_done: number;
  bandwidth_limit?: number;
  counts: { total: number; succeeded: number; failed: number };
}

export async function bandwidthTests(on: 'sqlite' | 'postgres'): Promise<void> {
  let s3: S3rverHandle;
  let client: S3Client;
  let bucket: string;

  before(async () => {
    s3 = await startS3rver();
    client = s3Client(s3.endpoint);
    bucket = unique('bw').toLowerCase();
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    const seeds: Array<[string, number]> = [
      ...Array.from({ length: JOB_OBJECTS }, (_, i): [string, number] => [`job/${i}.bin`, JOB_OBJECT_SIZE]),
      ...Array.from({ length: WS_OBJECTS }, (_, i): [string, number] => [`ws-a/${i}.bin`, WS_OBJECT_SIZE]),
      ...Array.from({ length: WS_OBJECTS }, (_, i): [string, number] => [`ws-b/${i}.bin`, WS_OBJECT_SIZE]),
    ];
    for (const [key, size] of seeds) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: randomBytes(size) }));
    }
  });

  after(async () => {
    await killAll();
    client?.destroy();
    await s3?.close();
  });

  for (const database of (await testDatabases()).filter((d) => d.name === on)) {
    describe(`bandwidth caps across two processes [${database.name}]`, {
      skip: database.skip ?? false,
    }, () => {
      let schema: Awaited<ReturnType<typeof createSchema>> | undefined;
      let dataDir: string;
      let env: Record<string, string>;
      let servers: FerryProcess[] = [];
      let origin: string;
      let token: string;
      let src: string;
      let dst: string;

      /** Two `ferry serve` on the database, each running two objects at once; `extra` on top of env. */
      async function serveTwo(extra: Record<string, string> = {}): Promise<void> {
        await Promise.all(servers.map((s) => s.stop()));
        servers = [];
        const ports = [await freePort(), await freePort()];
        servers = await Promise.all(
          ['one', 'two'].map((name, i) =>
            startServe(name, { ...env, ...extra, FERRY_PORT: String(ports[i]) }),
          ),
        );
        origin = `http://127.0.0.1:${ports[0]}`;
      }

      const logs = () => servers.map((s) => s.log()).join('\n');

      before(async () => {
        dataDir = mkdtempSync(join(tmpdir(), 'ferry-bandwidth-'));
        if (database.name === 'postgres') schema = await createSchema();
        env = {
          ...(schema ? { FERRY_DATABASE_URL: schema.url } : {}),
          FERRY_DATA_DIR: dataDir,
          FERRY_MASTER_KEY: randomBytes(32).toString('base64'),
          FERRY_EGRESS_ALLOW: '127.0.0.1/32',
          FERRY_WORKER_CONCURRENCY: '2',
          FERRY_SHUTDOWN_SECONDS: '1',
          FERRY_ROLE: 'all',
        };
        // The first one alone makes the schema and the bootstrap key; then the second joins it.
        const port = await freePort();
        origin = `http://127.0.0.1:${port}`;
        servers = [await startServe('setup', { ...env, FERRY_PORT: String(port) })];
        token = readFileSync(join(dataDir, 'bootstrap-key'), 'utf8').trim();
        [src, dst] = await Promise.all([
          s3Location(origin, token, s3.endpoint, 'FERRYBWSRC'),
          s3Location(origin, token, s3.endpoint, 'FERRYBWDST'),
        ]);
      });

      after(async () => {
        await killAll();
        await schema?.drop();
        rmSync(dataDir, { recursive: true, force: true });
      });

      const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
        apiCall<T>(origin, token, method, path, body);

      async function copy(from: string, to: string, extra: Record<string, unknown> = {}): Promise<string> {
        const res = await call('POST', '/v1/copy', {
          from: `${src}:${bucket}/${from}`,
          to: `${dst}:${bucket}/${to}`,
          ...extra,
        });
        assert.equal(res.status, 202, JSON.stringify(res.json));
        return String(res.json.job_id);
      }

      async function finished(id: string, ms: number): Promise<JobView> {
        const deadline = Date.now() + ms;
        for (;;) {
          const res = await call<JobView>('GET', `/v1/jobs/${id}`);
          assert.equal(res.status, 200, JSON.stringify(res.json));
          if (!['planning', 'running'].includes(res.json.status)) return res.json;
          if (Date.now() > deadline) assert.fail(`job ${id} not finished within ${ms} ms\n${logs()}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      }

      /** Bytes a second over the jobs' run: from the first start to the last finish. */
      function rate(jobs: JobView[]): { rate: number; seconds: number; bytes: number } {
        const start = Math.min(...jobs.map((j) => Date.parse(j.started_at ?? '')));
        const end = Math.max(...jobs.map((j) => Date.parse(j.finished_at ?? '')));
        const bytes = jobs.reduce((n, j) => n + j.bytes_done, 0);
        const seconds = (end - start) / 1000;
        return { rate: bytes / seconds, seconds, bytes };
      }

      let capped: { rate: number; seconds: number; bytes: number } | undefined;

      test("a job's cap holds over its objects copied at once in both processes (within 10%)", async (t) => {
        await serveTwo();
        const id = await copy('job/', `capped-${database.name}/`, { bandwidth_limit: JOB_CAP });
        const job = await finished(id, 90_000);
        assert.equal(job.status, 'complete', `${JSON.stringify(job)}\n${logs()}`);
        assert.equal(job.counts.succeeded, JOB_OBJECTS);
        assert.equal(job.bandwidth_limit, JOB_CAP);
        capped = rate([job]);
        t.diagnostic(`capped job: ${JSON.stringify(capped)}`);
        assert.equal(capped.bytes, JOB_OBJECTS * JOB_OBJECT_SIZE);
        const error = Math.abs(capped.rate - JOB_CAP) / JOB_CAP;
        assert.ok(
          error <= 0.1,
          `${capped.bytes} bytes in ${capped.seconds} s: ${Math.round(capped.rate)} B/s against a cap of ${JOB_CAP}`,
        );
        const copied = await readS3(client, bucket, `capped-${database.name}/0.bin`);
        assert.equal(copied?.length, JOB_OBJECT_SIZE);
      });

      test('the same copy without a cap runs more than three times faster', async (t) => {
        assert.ok(capped, 'the capped copy ran first');
        const id = await copy('job/', `uncapped-${database.name}/`);
        const job = await finished(id, 60_000);
        assert.equal(job.status, 'complete', `${JSON.stringify(job)}\n${logs()}`);
        assert.equal(job.bandwidth_limit, undefined);
        const free = rate([job]);
        t.diagnostic(`uncapped job: ${JSON.stringify(free)}`);
        assert.ok(
          free.seconds * 3 < capped.seconds,
          `uncapped ${free.seconds} s against capped ${capped.seconds} s for ${free.bytes} bytes`,
        );
      });

      test("FERRY_WORKSPACE_BANDWIDTH holds over the workspace's jobs in both processes (within 10%)", async (t) => {
        await serveTwo({ FERRY_WORKSPACE_BANDWIDTH: String(WORKSPACE_CAP) });
        const ids = [
          await copy('ws-a/', `ws-${database.name}/a/`),
          await copy('ws-b/', `ws-${database.name}/b/`),
        ];
        const jobs = [];
        for (const id of ids) jobs.push(await finished(id, 90_000));
        for (const job of jobs) assert.equal(job.status, 'complete', `${JSON.stringify(job)}\n${logs()}`);
        const got = rate(jobs);
        t.diagnostic(`workspace jobs: ${JSON.stringify(got)}`);
        assert.equal(got.bytes, 2 * WS_OBJECTS * WS_OBJECT_SIZE);
        const error = Math.abs(got.rate - WORKSPACE_CAP) / WORKSPACE_CAP;
        assert.ok(
          error <= 0.1,
          `${got.bytes} bytes in ${got.seconds} s: ${Math.round(got.rate)} B/s against a cap of ${WORKSPACE_CAP}`,
        );
      });
    });
  }
}
