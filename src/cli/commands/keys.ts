// `ferry keys …`: the workspace's API keys through the API (docs/api.md, "API keys"). With
// `--workspace NAME`, `keys create` is the server-side command it always was: it writes the key
// straight into the database named by the FERRY_* settings (and makes the workspace if it is new), for
// the first key of a workspace or when no key is at hand.
import type { ApiKey, CreatedApiKey } from '../../api/keys.js';
import { type Cli, type Context, contextFor } from '../context.js';
import { table, time } from '../format.js';

function state(k: ApiKey, now: number): string {
  if (k.revoked_at) return `revoked ${time(k.revoked_at)}`;
  if (k.expires_at && Date.parse(k.expires_at) <= now) return 'expired';
  return 'active';
}

async function list(ctx: Context): Promise<void> {
  const keys = await ctx.api().get<ApiKey[]>('/v1/tokens');
  const now = Date.now();
  ctx.print(keys, () =>
    table(keys, [
      { header: 'ID', value: (k) => k.id },
      { header: 'NAME', value: (k) => k.name },
      { header: 'STATE', value: (k) => state(k, now) },
      { header: 'CREATED', value: (k) => time(k.created_at) },
      { header: 'EXPIRES', value: (k) => time(k.expires_at) },
      { header: 'LAST USED', value: (k) => time(k.last_used_at) },
    ]),
  );
}

export function keyCommands(cli: Cli): Cli {
  const id = { type: 'string', demandOption: true, describe: 'the key id (ferry keys lists them)' } as const;
  return cli.command('keys', 'API keys: list (default), create, rename, revoke', (y) =>
    y
      .command(
        ['list', '$0'],
        "list the workspace's keys, oldest first",
        (c) => c,
        (argv) => list(contextFor(argv)),
      )
      .command(
        'create',
        'create a key and print it (shown only this once)',
        (c) =>
          c
            .option('name', { type: 'string', default: 'cli', describe: 'a label for the key' })
            .option('expires-at', { type: 'string', describe: 'RFC 3339 time the key stops working' })
            .option('workspace', {
              type: 'string',
              describe:
                'create it in the database directly (server side, FERRY_* settings), making the workspace if new',
            }),
        async (argv) => {
          if (argv.workspace !== undefined) {
            const { keysCreateLocal } = await import('../local.js');
            return keysCreateLocal({
              workspace: argv.workspace,
              name: argv.name,
              json: argv.json === true,
              ...(argv.expiresAt === undefined ? {} : { expiresAt: argv.expiresAt }),
            });
          }
          const ctx = contextFor(argv);
          const body = {
            name: argv.name,
            ...(argv.expiresAt === undefined ? {} : { expires_at: argv.expiresAt }),
          };
          const k = await ctx.api().send<CreatedApiKey>('POST', '/v1/tokens', body);
          ctx.print(k, () => k.token);
          if (!ctx.json)
            ctx.note(
              `key ${k.id} "${k.name}"${k.expires_at ? `, expires ${time(k.expires_at)}` : ''}; it is not shown again`,
            );
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
