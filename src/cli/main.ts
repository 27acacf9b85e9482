// The client side of `ferry`: argument parsing (yargs), `--help` on every command, shell completion,
// and the command groups, one module each under src/cli/commands/. `serve` and `migrate` are declared
// here only so that help and completion know them; src/cli.ts runs them without loading this module.
import yargs from 'yargs';
import { auditCommand } from './commands/audit.js';
import { bulkCommands } from './commands/bulk.js';
import { jobCommands } from './commands/jobs.js';
import { keyCommands } from './commands/keys.js';
import { locationCommands } from './commands/locations.js';
import { lsCommand } from './commands/ls.js';
import { mbCommand } from './commands/mb.js';
import { scheduleCommands } from './commands/schedules.js';
import { sessionCommands } from './commands/session.js';
import { shareCommands } from './commands/share.js';
import { syncCommands } from './commands/sync.js';
import { verifyCommand } from './commands/verify.js';
import type { Cli } from './context.js';
import { usageError } from './exit.js';

const EPILOG = `The server is FERRY_URL (default http://127.0.0.1:8080) with the key FERRY_API_KEY, or what
ferry login saved. Places are location:path (or location/path); a location is its label or id.
cp and mv also upload and download: a path on this computer starts with ./, ../, / or ~.
Exit codes: 0 ok, 1 server error or unreachable, 2 usage, 3 not found, 4 conflict,
5 authentication or a scope the key lacks, 6 watched work ended failed, partial or canceled,
7 a verify found differences. See docs/cli.md.`;

export async function run(argv: string[]): Promise<void> {
  let cli: Cli = yargs(argv)
    .scriptName('ferry')
    .usage('$0 <command> [options]')
    .option('json', {
      type: 'boolean',
      describe: 'print the API answer as JSON (one document)',
      global: true,
    })
    .command('serve', 'start the HTTP service (and background work); settings are FERRY_* variables', (y) =>
      y.strict(),
    )
    .command('migrate', 'bring the database schema up to date', (y) => y.strict());
  for (const add of [
    lsCommand,
    mbCommand,
    bulkCommands,
    syncCommands,
    verifyCommand,
    shareCommands,
    jobCommands,
    scheduleCommands,
    locationCommands,
    keyCommands,
    auditCommand,
    sessionCommands,
  ])
    cli = add(cli);
  await cli
    .completion('completion', 'print the bash/zsh completion script (source it from your shell profile)')
    .demandCommand(1, 'name a command; ferry --help lists them')
    .recommendCommands()
    .strict()
    .help()
    .alias('help', 'h')
    .version(false)
    .epilog(EPILOG)
    .wrap(Math.min(120, process.stdout.columns || 120))
    .fail((message, err) => {
      if (err) throw err;
      throw usageError(
        message.includes('--help') ? message : `${message}\n\nrun the command with --help for its usage`,
      );
    })
    .parseAsync();
}
