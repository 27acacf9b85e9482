// docs/cli.md's "A recorded session", run for real: the commands of its three blocks, in order, by
// bash in a fresh folder, against a `ferry serve` started the way the README starts it (SQLite, a fresh
// data folder), with s3rver holding the buckets `photos` and `backup` and smtp-server as the mail server. `record()` runs them and returns
// what each printed; cli-session.test.ts checks the page against it, and
//   npm run docs:cli-session
// writes it into the page (the only way that section is edited). The ports, the folder, ids, times and
// speeds differ from run to run: the check compares with those masked (see mask()).
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { FERRY_BIN as CLI, startServe } from '../support/processes.js';
import { startS3rver } from '../support/s3rver.js';
import { TestSmtp } from '../support/smtp.js';
import { s3Client } from '../support/transfers.js';

export const PAGE = new URL('../../docs/cli.md', import.meta.url).pathname;
const HEADING = '\n## A recorded session\n';
/** What the page shows in place of this run's own values. */
const SHOWN = { folder: '/tmp/ferry-demo', port: '18080', s3: '38067' };

export interface Step {
  command: string;
  /** What it printed (stdout and stderr as one stream), then `[exit N]`. */
  output: string[];
}

/** The session's fenced blocks, each a list of steps; block 1 (a terminal's frames) has one. */
export function parse(page: string): { before: string; blocks: Step[][]; between: string[]; after: string } {
  const at = page.indexOf(HEADING);
  if (at < 0) throw new Error('docs/cli.md has no "## A recorded session"');
  const parts = page.slice(at).split(/^```\n/m);
  // parts: prose, block, prose, block, prose, block, rest
  const blocks: Step[][] = [];
  const between: string[] = [];
  for (let i = 1; i < parts.length; i += 2) {
    const steps: Step[] = [];
    for (const line of (parts[i] as string).replace(/\n$/, '').split('\n')) {
      if (line.startsWith('$ ')) steps.push({ command: line.slice(2), output: [] });
      else if (steps.length > 0) (steps[steps.length - 1] as Step).output.push(line);
    }
    for (const step of steps) while (step.output.at(-1) === '') step.output.pop();
    blocks.push(steps);
    between.push(parts[i - 1] as string);
  }
  return {
    before: page.slice(0, at),
    blocks,
    between,
    after: parts.length % 2 === 1 ? (parts.at(-1) as string) : '',
  };
}

export function render(parsed: ReturnType<typeof parse>): string {
  let out = parsed.before;
  parsed.blocks.forEach((steps, i) => {
    out += `${parsed.between[i]}\`\`\`\n`;
    out += steps.map((s) => [`$ ${s.command}`, ...s.output].join('\n')).join('\n\n');
    out += '\n```\n';
  });
  return out + parsed.after;
}

/**
 * What differs between two honest runs, masked: ids, times (a send's with its weekday too: "Fri
 * 2026-12-04 09:00"), ports, the folder, tokens, speeds, durations.
 */
export function mask(line: string): string {
  return line
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replace(/\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?/g, '<time>')
    .replace(/\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{4}-\d\d-\d\d \d\d:\d\d\b/g, '<time>')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
    .replace(/\/s\/[A-Za-z0-9_-]{20,}/g, '/s/<token>')
    .replace(/fry_[A-Za-z0-9_-]+…?/g, 'fry_<key>')
    .replace(/\/tmp\/[^/\s]+/g, '<folder>')
    .replace(/\d+(\.\d+)? (B|KiB|MiB|GiB)\/s/g, '<speed>')
    .replace(/ETA \S+/g, 'ETA <eta>')
    .replace(/ in \d+:\d\d(:\d\d)?\b/g, ' in <duration>')
    .replace(/\s+/g, ' ')
    .trimEnd();
}

/**
 * The lines worth comparing: a --watch run may or may not catch the queued and running states, and a
 * terminal's progress frames depend on the moment they were drawn.
 */
export function comparable(output: string[]): string[] {
  return output
    .filter((l) => !/^(queued|running|planning): /.test(l) && !(l.startsWith('[') && !l.startsWith('[exit')))
    .map(mask);
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

function sh(command: string, cwd: string, env: NodeJS.ProcessEnv, tty: boolean): Promise<string[]> {
  const script = `exec 2>&1; ${command}; echo "[exit $?]"`;
  const child = tty
    ? spawn('script', ['-q', '-e', '-c', `bash -c ${quote(script)}`, '/dev/null'], {
        cwd,
        env,
        stdio: 'pipe',
      })
    : spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', () => resolve(out.replace(/\r\n/g, '\n').replace(/\n$/, '').split('\n')));
  });
}

/** A terminal's output as its first and last progress frames, then what followed them. */
const ESCAPES = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g');
function frames(lines: string[]): string[] {
  const drawn = lines.flatMap((l) => l.split('\r')).map((l) => l.replace(ESCAPES, ''));
  const bar = (l: string) => l.startsWith('[') && !l.startsWith('[exit');
  const bars = drawn.filter(bar);
  const rest = drawn.filter((l) => !bar(l) && l.trim() !== '' && !l.startsWith('[exit'));
  return [...(bars.length > 0 ? [bars[0] as string, bars.at(-1) as string] : []), ...rest];
}

/** Runs every step of the page's session, in order; returns the page's blocks with this run's output. */
export async function record(page: string): Promise<{ blocks: Step[][]; close(): Promise<void> }> {
  const parsed = parse(page);
  const folder = mkdtempSync(join(tmpdir(), 'ferry-demo-'));
  const [s3, smtp] = await Promise.all([startS3rver(), new TestSmtp().start()]);
  const client = s3Client(s3.endpoint);
  let server: Awaited<ReturnType<typeof startServe>> | undefined;
  const close = async () => {
    await server?.stop();
    client.destroy();
    await Promise.all([s3.close(), smtp.close()]);
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    for (const Bucket of ['photos', 'backup']) await client.send(new CreateBucketCommand({ Bucket }));
    const put = (Key: string, Body: Buffer) =>
      client.send(new PutObjectCommand({ Bucket: 'photos', Key, Body }));
    await put('2026/readme.txt', Buffer.alloc(1229, 'notes\n'));
    for (let i = 1; i <= 40; i++)
      await put(`2026/trip/img-${String(i).padStart(3, '0')}.jpg`, Buffer.alloc(262144, i));
    await put('tmp/scratch-1.bin', Buffer.alloc(4096, 1));
    await put('tmp/scratch-2.bin', Buffer.alloc(70000, 2));

    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TZ: 'Europe/Paris',
      XDG_CONFIG_HOME: join(folder, 'config'),
    };
    for (const name of Object.keys(env)) if (name.startsWith('FERRY_')) delete env[name];
    const bin = join(folder, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'ferry'), `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(CLI)} "$@"\n`);
    chmodSync(join(bin, 'ferry'), 0o755);
    env.PATH = `${bin}:${env.PATH ?? ''}`;
    writeFileSync(
      join(folder, 's3-secret.json'),
      JSON.stringify({ access_key_id: 'S3RVER', secret_access_key: 'S3RVER' }),
    );
    // On a port of the system's choice (FERRY_PORT=0), which the page shows as SHOWN.port. Its share
    // links name the page's address as a server listening there would: the real port is known only
    // once bound, too late for the links' FERRY_PUBLIC_URL.
    server = await startServe('cli-session', {
      TZ: 'Europe/Paris',
      FERRY_DATA_DIR: join(folder, 'data'),
      FERRY_EGRESS_ALLOW: '127.0.0.1',
      FERRY_PUBLIC_URL: `http://127.0.0.1:${SHOWN.port}`,
      FERRY_SMTP_URL: smtp.url,
    });
    const { port } = new URL(server.origin);

    // The page's own addresses, as this run has them.
    const local = (command: string) =>
      command
        .replaceAll(`127.0.0.1:${SHOWN.port}`, `127.0.0.1:${port}`)
        .replaceAll(`127.0.0.1:${SHOWN.s3}`, `127.0.0.1:${s3.port}`);
    const shown = (line: string) =>
      line
        .replaceAll(folder, SHOWN.folder)
        .replaceAll(`127.0.0.1:${port}`, `127.0.0.1:${SHOWN.port}`)
        .replaceAll(`127.0.0.1:${s3.port}`, `127.0.0.1:${SHOWN.s3}`)
        .replace(/^(fry_[A-Za-z0-9_-]{4})[A-Za-z0-9_-]+$/, '$1…');
    const blocks: Step[][] = [];
    for (const steps of parsed.blocks) {
      const done: Step[] = [];
      const terminal = steps.length === 1 && steps[0]?.output.at(-1)?.startsWith('[exit') !== true;
      for (const step of steps) {
        const printed = await sh(local(step.command), folder, env, terminal);
        const output = (terminal ? frames(printed) : printed).map(shown);
        done.push({ command: step.command, output });
      }
      blocks.push(done);
    }
    return { blocks, close };
  } catch (err) {
    await close();
    throw err;
  }
}

if (process.argv[1] === new URL(import.meta.url).pathname && process.argv.includes('--write')) {
  const page = readFileSync(PAGE, 'utf8');
  const run = await record(page);
  try {
    writeFileSync(PAGE, render({ ...parse(page), blocks: run.blocks }));
    console.log('docs/cli.md: "A recorded session" rewritten from a real run');
  } finally {
    await run.close();
  }
}
