// `ferry keys …`: the workspace's API keys through the API (docs/api.md, "API keys"). With
// `--workspace NAME`, `keys create` is the server-side command it always was: it writes the key
// straight into the database named by the FERRY_* settings (and makes the workspace if it is new), for
// the first key of a workspace or when no key is at hand. Both doors take --scope and --location
// (docs/api.md, "Scopes"): a key limited to what it is for, and to where. `keys rotate-master` is server
// side too: it re-wraps every stored secret under a new master key (docs/security.md, "Rotating the
// master key").
import type { ApiKey } from '../../api/routes.js';
import { type Cli, type Context, contextFor } from '../context.js';
import { usageError } from '../exit.js';
import { table, time } from '../format.js';
import { type LocationItem, locationIds, parseScopes, SCOPES, showScopes, words } from '../scopes.js';

/** "all", or the labels of the key's locations (their ids where the caller does not see them). */
function showLocations(k: { locations?: string[] }, seen: readonly LocationItem[]): string {
  if (k.locations === undefined) return 'all';
  return k.locations.map((id) => seen.find((l) => l.id === id)?.label ?? id).join(',');
}

function state(k: ApiKey, now: number): string {
  if (k.revoked_at) return `revoked ${time(k.revoked_at)}`;
  if (k.expires_at && Date.parse(k.expires_at) <= now) return 'expired';
  return 'active';
}

async function list(ctx: Context): Promise<void> {
  const keys = await ctx.api().get('/v1/tokens');
  const limited = keys.some((k) => k.locations !== undefined);
  const seen = limited ? await ctx.api().get('/v1/locations') : [];
  const now = Date.now();
  ctx.print(keys, () =>
    table(keys, [
      { header: 'ID', value: (k) => k.id },
      { header: 'NAME', value: (k) => k.name },
      { header: 'STATE', value: (k) => state(k, now) },
      { header: 'SCOPES', value: (k) => showScopes(k.scopes) },
      { header: 'LOCATIONS', value: (k) => showLocations(k, seen) },
      { header: 'CREATED', value: (k) => time(k.created_at) },
      { header: 'EXPIRES', value: (k) => time(k.expires_at) },
      { header: 'LAST USED', value: (k) => time(k.last_used_at) },
    ]),
  );
}

export function keyCommands(cli: Cli): Cli {
  const id = { type: 'string', demandOption: true, describe: 'the key id (ferry keys lists them)' } as const;
  return cli.command('keys', 'API keys: list (default), create, rename, revoke; rotate-master', (y) =>
    y
      .command(
        ['list', 'ls', '$0'],
        "list the workspace's keys, oldest first, with their scopes",
        (c) => c,
        (argv) => list(contextFor(argv)),
      )
      .command(
        'create [NAME]',
        'create a key and print it (shown only this once)',
        (c) =>
          c
            .positional('NAME', {
              type: 'string',
              describe: 'a label for the key (or --name; default "cli")',
            })
            .option('name', { type: 'string', describe: 'a label for the key (default "cli")' })
            .option('expires-at', { type: 'string', describe: 'RFC 3339 time the key stops working' })
            .option('scope', {
              type: 'string',
              array: true,
              describe: `what the key may do: ${SCOPES.join(', ')} (repeat or separate with commas; default: all the creating key has)`,
            })
            .option('location', {
              type: 'string',
              array: true,
              describe:
                'the only locations the key may address, by label or id (repeat or separate with commas; default: all the creating key may)',
            })
            .option('workspace', {
              type: 'string',
              describe:
                'create it in the database directly (server side, FERRY_* settings), making the workspace if new',
            })
            .example('$0 keys create reports --scope read', 'a key that can only look')
            .example('$0 keys create backup --scope read,transfer', 'a key that can look and copy')
            .example(
              '$0 keys create nightly --scope read,transfer --location backups',
              'only for one location',
            )
            .example('$0 keys create first --workspace acme', 'server side: the first key of a workspace'),
        async (argv) => {
          // NAME and --name are one value: both written must agree.
          const names = [argv.NAME, argv.name].filter((n): n is string => typeof n === 'string');
          if (new Set(names).size > 1)
            throw usageError(`two names given (${names.map((n) => `"${n}"`).join(' and ')}); give one`);
          const name = names[0] ?? 'cli';
          const scopes = parseScopes(argv.scope);
          const locations = argv.location === undefined ? undefined : words(argv.location, '--location');
          if (argv.workspace !== undefined) {
            const { keysCreateLocal } = await import('../local.js');
            return keysCreateLocal({
              workspace: argv.workspace,
              name,
              json: argv.json === true,
              ...(argv.expiresAt === undefined ? {} : { expiresAt: argv.expiresAt }),
              ...(scopes === undefined ? {} : { scopes }),
              ...(locations === undefined ? {} : { locations }),
            });
          }
          const ctx = contextFor(argv);
          const seen = locations === undefined ? [] : await ctx.api().get('/v1/locations');
          const body = {
            name,
            ...(argv.expiresAt === undefined ? {} : { expires_at: argv.expiresAt }),
            ...(scopes === undefined ? {} : { scopes }),
            ...(locations === undefined ? {} : { locations: locationIds(locations, seen) }),
          };
          const k = await ctx.api().send('POST', '/v1/tokens', { body });
          ctx.print(k, () => k.token);
          if (!ctx.json) {
            ctx.note(
              `key ${k.id} "${k.name}"${k.expires_at ? `, expires ${time(k.expires_at)}` : ''}; scopes ${showScopes(k.scopes)}; locations ${showLocations(k, seen)}; it is not shown again`,
            );
          }
        },
      )
      .command(
        'rename <id> <name>',
        'give a key a new name',
        (c) => c.positional('id', id).positional('name', { type: 'string', demandOption: true }),
        async (argv) => {
          const ctx = contextFor(argv);
          await ctx.api().send('PATCH', '/v1/tokens/{id}', { id: argv.id, body: { name: argv.name } });
          ctx.print({ id: argv.id, name: argv.name }, () => `key ${argv.id} is now "${argv.name}"`);
        },
      )
      .command(
        'rotate-master',
        'server side: re-wrap every stored secret under FERRY_MASTER_KEY, while the service runs',
        (c) =>
          c
            .option('batch-size', {
              type: 'number',
              default: 100,
              describe: 'records re-wrapped per transaction (1 to 10000)',
            })
            .example(
              '$0 keys rotate-master',
              'with the settings of the service: the new FERRY_MASTER_KEY, the old one in FERRY_MASTER_KEY_PREVIOUS',
            )
            .epilog('The steps of a rotation are in docs/security.md, "Rotating the master key".'),
        async (argv) => {
          const batchSize = argv.batchSize;
          if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000)
            throw usageError(`--batch-size must be a whole number from 1 to 10000, got ${argv.batchSize}`);
          const { keysRotateMasterLocal } = await import('../local.js');
          return keysRotateMasterLocal({ batchSize, json: argv.json === true });
        },
      )
      .command(
        'revoke <id>',
        'stop a key at once (it stays in the list as revoked)',
        (c) => c.positional('id', id),
        async (argv) => {
          const ctx = contextFor(argv);
          await ctx.api().send('DELETE', '/v1/tokens/{id}', { id: argv.id });
          ctx.print({ id: argv.id, revoked: true }, () => `key ${argv.id} revoked`);
        },
      ),
  );
}
