// `ferry` as the user runs it, for the client tests: a real child process (`node bin/ferry.js …`,
// the built program) with only the settings a test gives (FERRY_URL, FERRY_API_KEY and a config directory of
// its own), optional stdin, and optionally on a pseudo-terminal (util-linux `script`) so that prompts
// and the progress bar see a TTY. Runs without blocking, since the server may live in this process.
import { spawn } from 'node:child_process';
import { FERRY_BIN as CLI } from '../support/processes.js';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env: Record<string, string>;
  /** Written to stdin, which is then closed (or, with tty, kept open until the exit). */
  stdin?: string;
  /** Run on a pseudo-terminal: stdin and stdout are the terminal; stderr is merged into stdout. */
  tty?: boolean;
  /** The working directory (for relative paths on this computer); the test's own by default. */
  cwd?: string;
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

export function ferry(args: string[], options: RunOptions): Promise<Run> {
  const base = { ...process.env };
  for (const name of Object.keys(base)) if (name.startsWith('FERRY_')) delete base[name];
  const env = { ...base, ...options.env };
  const argv = [process.execPath, CLI, ...args];
  const cwd = options.cwd ?? process.cwd();
  const child = options.tty
    ? spawn('script', ['-q', '-e', '-c', argv.map(quote).join(' '), '/dev/null'], { env, cwd, stdio: 'pipe' })
    : spawn(argv[0] as string, argv.slice(1), { env, cwd, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  if (options.stdin !== undefined) child.stdin.write(options.stdin);
  if (!options.tty) child.stdin.end();
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      child.stdin.destroy();
      resolve({ code, stdout, stderr });
    });
  });
}
