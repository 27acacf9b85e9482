// `ferry login`, `logout` and `whoami`: the server address and key kept in the user's config file
// (src/cli/settings.ts). Login checks the key with GET /v1/key before saving it, so a typo is caught at
// once (any valid key may read itself, whatever its scopes); the key is read without echo (or from
// stdin), never from the command line. whoami shows the key's name, id and scopes.
import { type Cli, contextFor } from '../context.js';
import { CliError, EXIT } from '../exit.js';
import { time } from '../format.js';
import { createApi } from '../http.js';
import { secretLine } from '../prompt.js';
import { SCOPES, showScopes } from '../scopes.js';
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
        const me = await createApi({
          url,
          urlSource: argv.url ? 'FERRY_URL' : 'default',
          key,
          keySource: 'config file',
        }).get('/v1/key');
        const path = saveLogin(url, key);
        ctx.print(
          { url, config: path },
          () => `logged in to ${url} with the key "${me.name}"; saved in ${path}`,
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
      "check the key and show the server, the key's name, id and scopes",
      (y) => y,
      async (argv) => {
        const ctx = contextFor(argv);
        const settings = loadSettings();
        const key = await ctx.api().get('/v1/key');
        const info = {
          url: settings.url,
          url_from: settings.urlSource,
          key_from: settings.keySource,
          key_valid: true,
          key,
        };
        const scopes = showScopes(key.scopes);
        // The locations list answers only those the key may address.
        const places =
          key.locations === undefined
            ? 'all'
            : (await ctx.api().get('/v1/locations')).map((l) => l.label).join(', ');
        ctx.print(info, () =>
          [
            `server:    ${settings.url} (${settings.urlSource})`,
            `key:       "${key.name}" ${key.id}, from ${settings.keySource}, accepted`,
            `scopes:    ${scopes === 'all' ? `all (${SCOPES.join(', ')})` : key.scopes.join(', ')}`,
            `locations: ${places}`,
            ...(key.expires_at ? [`expires:   ${time(key.expires_at)}`] : []),
          ].join('\n'),
        );
      },
    );
}
