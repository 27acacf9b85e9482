// What `ferry` does without a server: --help on every command, the completion script, usage errors
// (exit 2) before any setting is read, and which modules each path loads: `migrate` never the client,
// the client never the database drivers or the storage SDKs (docs/cli.md, "serve, migrate").
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ferry, type Run } from './run.js';

const home = mkdtempSync(join(tmpdir(), 'ferry-cli-help-'));
after(() => rmSync(home, { recursive: true, force: true }));

const COMMANDS = [
  ['ls'],
  ['mb'],
  ['cp'],
  ['mv'],
  ['rm'],
  ['pull'],
  ['verify'],
  ['share'],
  ['shares'],
  ['shares', 'revoke'],
  ['send'],
  ['sends', 'show'],
  ['jobs'],
  ['jobs', 'show'],
  ['jobs', 'watch'],
  ['jobs', 'report'],
  ['jobs', 'retry'],
  ['jobs', 'cancel'],
  ['jobs', 'undo'],
  ['transfers'],
  ['transfers', 'show'],
  ['transfers', 'watch'],
  ['locations'],
  ['locations', 'get'],
  ['locations', 'status'],
  ['locations', 'refresh'],
  ['locations', 'create'],
  ['locations', 'rename'],
  ['locations', 'set-secret'],
  ['locations', 'delete'],
  ['keys'],
  ['keys', 'create'],
  ['keys', 'rename'],
  ['keys', 'revoke'],
  ['keys', 'rotate-master'],
  ['audit'],
  ['login'],
  ['logout'],
  ['whoami'],
  ['serve'],
  ['migrate'],
];

test('--help on every command prints its usage and exits 0, without reading the config file', async () => {
  // A config file that cannot be read as JSON: help must not touch it.
  const config = join(home, 'broken');
  mkdirSync(join(config, 'ferry'), { recursive: true });
  writeFileSync(join(config, 'ferry', 'config.json'), 'not json');
  const env = { XDG_CONFIG_HOME: config };
  // Four at a time: three dozen processes at once would only compete for the machine.
  const results: Run[] = [];
  for (let i = 0; i < COMMANDS.length; i += 4) {
    results.push(
      ...(await Promise.all(COMMANDS.slice(i, i + 4).map((words) => ferry([...words, '--help'], { env })))),
    );
  }
  results.forEach((r, i) => {
    const words = (COMMANDS[i] as string[]).join(' ');
    assert.equal(r.code, 0, `${words}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^ferry ${words}`, 'm'), words);
  });
  const broken = await ferry(['ls'], { env });
  assert.equal(broken.code, 2);
  assert.match(broken.stderr, /config\.json is not a JSON object; run ferry logout and ferry login again/);
});

test('completion prints the bash and zsh scripts; the completions list subcommands and options', async () => {
  const bash = await ferry(['completion'], { env: { SHELL: '/bin/bash' } });
  assert.equal(bash.code, 0);
  assert.match(bash.stdout, /complete -o bashdefault -o default -F _ferry_yargs_completions ferry/);
  const zsh = await ferry(['completion'], { env: { SHELL: '/bin/zsh' } });
  assert.match(zsh.stdout, /^#compdef ferry/);
  const jobs = await ferry(['--get-yargs-completions', 'jobs', ''], { env: {} });
  assert.deepEqual(jobs.stdout.trim().split('\n').slice(0, 6), [
    'list',
    'show',
    'watch',
    'report',
    'retry',
    'cancel',
  ]);
  const cp = await ferry(['--get-yargs-completions', 'cp', '--'], { env: {} });
  assert.ok(cp.stdout.split('\n').includes('--manifest'), cp.stdout);
});

test('usage errors exit 2 with a message: an unknown command, an unknown option, a missing argument', async () => {
  for (const args of [
    ['frobnicate'],
    ['ls', '--bogus'],
    ['cp', 'a:b'],
    ['mv', 'a:b'],
    ['jobs', 'watch'],
    [],
  ]) {
    const r = await ferry(args, { env: {} });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^ferry: /);
  }
});

/**
 * The source modules a run resolves (through a loader hook that reports each to stderr). The hook runs
 * on the loader's own thread, whose process.stderr reaches the main thread asynchronously and can be
 * lost when the process exits: it writes to the file descriptor directly.
 */
async function modulesLoaded(args: string[]): Promise<string[]> {
  const hook = `data:text/javascript,${encodeURIComponent(`
    import { register } from 'node:module';
    register('data:text/javascript,' + encodeURIComponent(\`
      import { writeSync } from 'node:fs';
      export async function resolve(s, c, next) {
        const r = await next(s, c);
        if (r.url.startsWith('file:')) writeSync(2, 'LOADED ' + r.url + '\\\\n');
        return r;
      }\`));`)}`;
  const cli = new URL('../../src/cli.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', hook, cli, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: home, FERRY_DATA_DIR: join(home, 'data') },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 0, stderr);
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('LOADED '))
    .map((l) => l.slice('LOADED '.length));
}

test('migrate loads neither the client nor yargs; the client loads no database driver, storage SDK or server code', async () => {
  const migrate = await modulesLoaded(['migrate']);
  assert.ok(
    migrate.some((u) => u.includes('/src/db/database.ts')),
    'the hook sees the modules',
  );
  assert.deepEqual(
    migrate.filter((u) => /\/src\/cli\/(main|commands\/)|node_modules\/yargs\//.test(u)),
    [],
  );
  const client = await modulesLoaded(['ls', '--help']);
  assert.ok(
    client.some((u) => u.includes('/src/cli/main.ts')),
    'the hook sees the modules',
  );
  // The providers' declarations are plain data that import nothing but each other (src/stores/
  // declaration.ts): the client reads the provider list from them (src/providers.ts), and no store.
  const declaration = /\/src\/stores\/(declarations?|[a-z0-9]+\/declaration|shared\/fields)\.ts$/;
  assert.deepEqual(
    client.filter(
      (u) =>
        !declaration.test(u) &&
        /\/src\/(db|domain|stores|http|engine|config)|better-sqlite3|\/pg\/|@aws-sdk|@azure|@google-cloud|fastify/.test(
          u,
        ),
    ),
    [],
  );
});
