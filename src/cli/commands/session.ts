// `ferry login`, `logout` and `whoami`: the server address and key kept in the user's config file
// (src/cli/settings.ts). Login checks the key with GET /v1/locations before saving it, so a typo is
// caught at once; the key is read without echo (or from stdin), never from the command line.
import { type Cli, contextFor } from '../context.js';
import { CliError, EXIT } from '../exit.js';
import { createApi } from '../http.js';
import { secretLine } from '../prompt.js';
import { ApiKey, configPath, DEFAULT_URL, loadSettings, removeLogin, saveLogin } from '../settings.js';

export function sessionCommands(cli: Cli): Cli {
  return cli
    .command(
      'login',
      'check an API key against the server and save both in the config file (mode 0600)',
      (y) =>
        y
          .option('url', { type: 'string', describe: `the server (default: FERRY_URL, else ${DEFAULT_URL})` })
          .example('$0 login --url https://ferry.example.com', 'asks for the key')
          .example('cat key | $0 login --url https://ferry.example.com', 'reads it from stdin'),
      async (argv) => {
        const ctx = contextFor(argv);
        const url = (argv.url ?? process.env.FERRY_URL ?? DEFAULT_URL).replace(/\/+$/, '');
        const text = await secretLine(`API key for ${url}: `);
        if (text === '')
          throw new CliError('no API key given; type it at the prompt or pipe it to stdin', EXIT.usage);
        const key = new ApiKey(text);
        const locations = await createApi({
          url,
          urlSource: argv.url ? 'FERRY_URL' : 'default',
          key,
          keySource: 'config file',
        }).get<unknown[]>('/v1/locations');
        const path = saveLogin(url, key);
        ctx.print(
          { url, config: path },
          () => `logged in to ${url} (${locations.length} locations); saved in ${path}`,
        );
      },
    )
    .command(
      'logout',
      'remove the saved server and key',
      (y) => y,
      (argv) => {
        const ctx = contextFor(argv);
        const removed = removeLogin();
        ctx.print({ removed, config: configPath() }, () =>
          removed ? `removed ${configPath()}` : `not logged in (no ${configPath()})`,
        );
      },
    )
    .command(
      'whoami',
      'show which server and key the client uses, and check the key',
      (y) => y,
      async (argv) => {
        const ctx = contextFor(argv);
        const settings = loadSettings();
        const locations = await ctx.api().get<unknown[]>('/v1/locations');
        const info = {
          url: settings.url,
          url_from: settings.urlSource,
          key_from: settings.keySource,
          key_valid: true,
          locations: locations.length,
        };
        ctx.print(info, () =>
          [
            `server:    ${settings.url} (${settings.urlSource})`,
            `key:       from ${settings.keySource}, accepted`,
            `locations: ${locations.length}`,
          ].join('\n'),
        );
      },
    );
}
