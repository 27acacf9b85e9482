// bench/api A/B: GET /healthz (or --path, with the bootstrap key) of several builds of ferry, each in its
// own process at the defaults users run, measured in turn with the bare route (bench/api/bare.mjs) for
// --runs interleaved rounds, so that a load that moves under the run moves under every build alike.
// Prints requests per second, the ratio to the bare route per round, and each server's CPU time per
// request (/proc/<pid>/stat, Linux), which moves less with the load than requests per second do.
// A build is a copy of bin/, dist/ and package.json in /tmp/ferry-NAME with node_modules linked:
//   npm run build && mkdir /tmp/ferry-after && cp -r bin dist package.json /tmp/ferry-after/ \
//     && ln -s "$PWD/node_modules" /tmp/ferry-after/
//   npx tsx bench/api/ab.ts --servers before,after [--runs 5 --seconds 4 --prof DIR --tiny]
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { loadAverage } from '../support/figures.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    runs: { type: 'string', default: '5' },
    servers: { type: 'string', default: 'base' },
    prof: { type: 'string' },
    tiny: { type: 'boolean', default: false },
    path: { type: 'string', default: '/healthz' },
  },
});
const root = new URL('../..', import.meta.url).pathname;
const freePort = () =>
  new Promise<number>((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
const cpu = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(f[11]) + Number(f[12])) * 10000;
};
const procs: ChildProcess[] = [];
const dirs: string[] = [];
const targets: { name: string; url: string; pid: number; log?: string; headers?: Record<string, string> }[] =
  [];
console.log('load before', loadAverage());
try {
  const dataDir = mkdtempSync(join(tmpdir(), 'ferry-ab-'));
  dirs.push(dataDir);
  const bodyFile = join(dataDir, 'b.json');
  writeFileSync(bodyFile, 'x'.repeat(14000));
  const bare = async (name: string, file: string) => {
    const p = await freePort();
    const c = fork(join(root, 'bench/api/bare.mjs'), [], {
      env: { ...process.env, BARE_BODY: file, BARE_PORT: String(p) },
      execArgv: [],
    });
    procs.push(c);
    await new Promise((r) => c.once('message', r));
    targets.push({ name, url: `http://127.0.0.1:${p}/bare`, pid: c.pid ?? 0 });
  };
  await bare('bare', bodyFile);
  if (values.tiny) {
    const t = join(dataDir, 't.json');
    writeFileSync(t, '{"status":"ok"}');
    await bare('tiny', t);
  }
  for (const name of (values.servers ?? 'base').split(',')) {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-ab-'));
    dirs.push(dir);
    const port = await freePort();
    const log = join(dir, 'ferry.log');
    const prof = values.prof ? ['--cpu-prof', '--cpu-prof-dir', join(values.prof, name)] : [];
    const s = spawn(process.execPath, [...prof, `/tmp/ferry-${name}/bin/ferry.js`, 'serve'], {
      env: {
        ...process.env,
        FERRY_DATA_DIR: dir,
        FERRY_PORT: String(port),
        FERRY_LOG_LEVEL: 'info',
        FERRY_ROLE: 'api',
        // autocannon's 50 connections would get 503 after 1,000 requests each at the default cap.
        FERRY_HTTP_MAX_REQUESTS_PER_CONNECTION: '1000000',
        FERRY_RATE_LIST_PER_MINUTE: '1000000',
      },
      stdio: ['ignore', openSync(log, 'a'), 'inherit'],
    });
    procs.push(s);
    for (let i = 0; ; i++) {
      if (i === 100 || s.exitCode !== null) throw new Error(`${name}: the server did not start`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) break;
      } catch {}
      await new Promise((r) => setTimeout(r, 100));
    }
    const headers: Record<string, string> = {};
    if (values.path !== '/healthz')
      headers.authorization = `Bearer ${readFileSync(join(dir, 'bootstrap-key'), 'utf8').trim()}`;
    targets.push({ name, url: `http://127.0.0.1:${port}${values.path}`, pid: s.pid ?? 0, log, headers });
  }
  const m = async (t: (typeof targets)[0]) => {
    const c0 = cpu(t.pid);
    const r = await autocannon({
      url: t.url,
      connections: 50,
      duration: Number(values.seconds),
      headers: t.headers,
    });
    if (r.non2xx || r.errors)
      throw new Error(
        `${t.name}: ${r.non2xx} non-2xx answers, ${r.errors} errors, ${r.timeouts} timeouts (${JSON.stringify(r.statusCodeStats)})`,
      );
    return { rps: r.requests.average, us: (cpu(t.pid) - c0) / r.requests.total };
  };
  for (const t of targets) await m(t);
  const out = targets.map(() => [] as { rps: number; us: number }[]);
  for (let i = 0; i < Number(values.runs); i++)
    for (const [j, t] of targets.entries()) out[j]?.push(await m(t));
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  for (const [j, t] of targets.entries()) {
    const rs = out[j] ?? [];
    const ratios = rs.map((r, i) => r.rps / (out[0]?.[i]?.rps ?? Number.NaN));
    console.log(
      `${t.name.padEnd(10)} rps ${med(rs.map((r) => r.rps))
        .toFixed(0)
        .padStart(
          6,
        )} [${rs.map((r) => r.rps.toFixed(0)).join(' ')}]  ratio med ${(med(rs.map((r) => r.rps)) / med((out[0] ?? []).map((r) => r.rps))).toFixed(2)} per-round-med ${med(ratios).toFixed(2)} [${ratios.map((x) => x.toFixed(2)).join(' ')}]  cpu us/req ${med(rs.map((r) => r.us)).toFixed(1)} [${rs.map((r) => r.us.toFixed(1)).join(' ')}]`,
    );
    if (t.log) {
      const ls = readFileSync(t.log, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"msg":"request"'));
      console.log(`   lines ${ls.length}; last ${ls.at(-1)}`);
    }
  }
} finally {
  for (const p of procs) {
    const ex = new Promise((r) => p.on('exit', r));
    p.kill('SIGTERM');
    if (p.exitCode === null && p.signalCode === null) await ex;
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
console.log('load after', loadAverage());
