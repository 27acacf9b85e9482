// The `ferry` program. `serve` and `migrate` go straight to the server side (src/cli/local.ts), without
// loading the client or its argument parser; everything else, including `--help` and completion for
// those two, is the client (src/cli/main.ts), which loads the database only for `keys create --workspace`.
import { report } from './cli/exit.js';

async function dispatch(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const help = rest.some((a) => a === '--help' || a === '-h');
  if ((command === 'serve' || command === 'migrate') && !help) {
    const local = await import('./cli/local.js');
    local.noArguments(command, rest);
    return command === 'serve' ? local.serve() : local.migrate();
  }
  const { run } = await import('./cli/main.js');
  return run(argv);
}

dispatch(process.argv.slice(2)).catch((err: unknown) => {
  const code = report(err);
  process.exitCode = code;
  // A server that failed half-way through starting may hold handles open; do not hang on them, but let
  // stdout drain first (an exit at once can cut output written to a pipe).
  setTimeout(() => process.exit(code), 1000).unref();
});
