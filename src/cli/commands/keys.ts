// `ferry keys …`: the workspace's API keys through the API (docs/api.md, "API keys"). With
// `--workspace NAME`, `keys create` is the server-side command it always was: it writes the key
// straight into the database named by the FERRY_* settings (and makes the workspace if it is new), for
// the first key of a workspace or when no key is at hand. Both doors take --scope and --location
// (docs/api.md, "Scopes"): a key limited to what it is for.
import type { ApiKey, CreatedApiKey } from '../../api/keys.js';
import { type Cli, type Context, contextFor } from '../context.js';
import { CliError, usageError } from '../exit.js';
import { table, time } from '../format.js';
import {
  isUuid,
  type KnownLocation,
  locationIds,
  parseLocationWords,
  parseScopes,
  SCOPES,
  showLocations,
  showScopes,
} from '../scopes.js';

function state(k: ApiKey, now: number): string {
  if (k.revoked_at) return `revoked ${time(k.revoked_at)}`;
  if (k.expires_at && Date.parse(k.expires_at) <= now) return 'expired';
  return 'active';
}

/**
 * The workspace's locations, to show labels for ids; undefined when the key may not list them (it lacks
 * the "read" scope): the ids are shown then.
 */
export async function knownLocations(ctx: Context): Promise<KnownLocation[] | undefined> {
  try {
    return await ctx.api().get<KnownLocation[]>('/v1/locations');
  } catch (err) {
    if (err instanceof CliError && err.forbidden) return undefined;
    throw err;
  }
}

async function list(ctx: Context): Promise<void> {
  const keys = await ctx.api().get<ApiKey[]>('/v1/tokens');
  const known = !ctx.json && keys.some((k) => k.locations) ? await knownLocations(ctx) : undefined;
  const now = Date.now();
  ctx.print(keys, () =>
    table(keys, [
      { header: 'ID', value: (k) => k.id },
      { header: 'NAME', value: (k) => k.name },
      { header: 'STATE', value: (k) => state(k, now) },
      { header: 'SCOPES', value: (k) => showScopes(k.scopes) },
      { header: 'LOCATIONS', value: (k) => showLocations(k.locations, known) },
      { header: 'CREATED', value: (k) => time(k.created_at) },
      { header: 'EXPIRES', value: (k) => time(k.expires_at) },
      { header: 'LAST USED', value: (k) => time(k.last_used_at) },
    ]),
  );
}

/** The ids of --location's words: a UUID as it is (the server checks it), a label looked up. */
async function remoteLocationIds(ctx: Context, names: string[]): Promise<string[]> {
  if (names.every(isUuid)) return names.map((n) => n.toLowerCase());
  const known = await ctx.api().get<KnownLocation[]>('/v1/locations');
  return locationIds(names, known, time);
}

export function keyCommands(cli: Cli): Cli {
  const id = { type: 'string', demandOption: true, describe: 'the key id (ferry keys lists them)' } as const;
  return cli.command('keys', 'API keys: list (default), create, rename, revoke', (y) =>
    y
      .command(
        ['list', 'ls', '$0'],
        "list the workspace's keys, oldest first, with their scopes and locations",
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
                'the only locations the key may address, by label or id (repeat or separate with commas; default: every one)',
            })
            .option('workspace', {
              type: 'string',
              describe:
                'create it in the database directly (server side, FERRY_* settings), making the workspace if new',
            })
            .example('$0 keys create reports --scope read', 'a key that can only look')
            .example(
              '$0 keys create backup --scope read,transfer --location photos',
              'copies, within the location "photos" only',
            )
            .example('$0 keys create first --workspace acme', 'server side: the first key of a workspace'),
        async (argv) => {
          // NAME and --name are one value: both written must agree.
          const names = [argv.NAME, argv.name].filter((n): n is string => typeof n === 'string');
          if (new Set(names).size > 1)
            throw usageError(`two names given (${names.map((n) => `"${n}"`).join(' and ')}); give one`);
          const name = names[0] ?? 'cli';
          const scopes = parseScopes(argv.scope);
          const locations = parseLocationWords(argv.location);
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
          const body = {
            name,
            ...(argv.expiresAt === undefined ? {} : { expires_at: argv.expiresAt }),
            ...(scopes === undefined ? {} : { scopes }),
            ...(locations === undefined ? {} : { locations: await remoteLocationIds(ctx, locations) }),
          };
          const k = await ctx.api().send<CreatedApiKey>('POST', '/v1/tokens', body);
          ctx.print(k, () => k.token);
          if (!ctx.json) {
            const limits = [
              `scopes ${showScopes(k.scopes)}`,
              ...(k.locations
                ? [`limited to ${k.locations.length} location${k.locations.length === 1 ? '' : 's'}`]
                : []),
            ];
            ctx.note(
              `key ${k.id} "${k.name}"${k.expires_at ? `, expires ${time(k.expires_at)}` : ''}; ${limits.join('; ')}; it is not shown again`,
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
          await ctx.api().send('PATCH', `/v1/tokens/${encodeURIComponent(argv.id)}`, { name: argv.name });
          ctx.print({ id: argv.id, name: argv.name }, () => `key ${argv.id} is now "${argv.name}"`);
        },
      )
      .command(
        'revoke <id>',
        'stop a key at once (it stays in the list as revoked)',
        (c) => c.positional('id', id),
        async (argv) => {
          const ctx = contextFor(argv);
          await ctx.api().send('DELETE', `/v1/tokens/${encodeURIComponent(argv.id)}`);
          ctx.print({ id: argv.id, revoked: true }, () => `key ${argv.id} revoked`);
        },
      ),
  );
}
