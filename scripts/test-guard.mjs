// Holds a test file to its tier while it runs (docs/testing.md, "The tiers"; scripts/test-tiers.mjs
// says how a file's tier is found). scripts/test.mjs loads it into every test process with --import and
// sets FERRY_TEST_TIER:
//   unit      no socket (connect or listen), no child process, no SQLite (its addon is not loaded)
//   database  no child process; sockets to the PostgreSQL server of FERRY_TEST_DATABASE_URL only
// What a file may not do throws where it is tried, naming the rule, so the test that tried fails and
// says why: the file imports something that belongs in another tier (move the test, or the helper).
// Threads (node:worker_threads) are not processes: ferry hashes on them, and unit tests may too.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

const tier = process.env.FERRY_TEST_TIER;

function refuse(what) {
  throw new Error(
    `a ${tier}-tier test may not ${what} (docs/testing.md, "The tiers"): the file belongs in another tier`,
  );
}

if (tier === 'unit' || tier === 'database') {
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
    childProcess[name] = () => refuse(`start a process (child_process.${name})`);
  }
  syncBuiltinESMExports();
}

if (tier === 'unit') {
  net.Socket.prototype.connect = () => refuse('open a socket');
  net.Server.prototype.listen = () => refuse('listen on a socket');
  const dlopen = process.dlopen;
  process.dlopen = function guardedDlopen(module, filename, ...rest) {
    if (String(filename).includes('better_sqlite3')) refuse('open SQLite');
    return dlopen.call(this, module, filename, ...rest);
  };
}

if (tier === 'database') {
  const url = new URL(process.env.FERRY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  const allowed = { host: url.hostname || '127.0.0.1', port: Number(url.port || 5432) };
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function guardedConnect(...args) {
    const options =
      typeof args[0] === 'object' && args[0] !== null ? args[0] : { port: args[0], host: args[1] };
    const options0 = Array.isArray(options) ? options[0] : options;
    const port = Number(options0.port);
    const host = options0.host ?? 'localhost';
    const local =
      host === allowed.host ||
      (['127.0.0.1', 'localhost', '::1'].includes(host) &&
        ['127.0.0.1', 'localhost', '::1'].includes(allowed.host));
    if (options0.path === undefined && !(port === allowed.port && local)) {
      refuse(`open a socket to ${host}:${port} (only PostgreSQL's, ${allowed.host}:${allowed.port})`);
    }
    return connect.apply(this, args);
  };
  net.Server.prototype.listen = () => refuse('listen on a socket');
}
