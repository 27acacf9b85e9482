// `ferry locations …`: list, get, status, refresh, create, rename, set-secret, delete
// (docs/api.md "Locations"). Secrets come from a file or stdin so that they stay out of the process
// list and the shell history; the two access-key flags are there for quick local use.
import { readFileSync } from 'node:fs';
import type { BodyOf, LocationProjection } from '../../api/routes.js';
import { OAUTH_PROVIDERS } from '../../providers.js';
import { type Cli, type Context, contextFor } from '../context.js';
import { usageError } from '../exit.js';
import { fields, table, time } from '../format.js';
import { locationRef } from '../targets.js';

export async function printLocations(ctx: Context): Promise<void> {
  const list = await ctx.api().get('/v1/locations');
  ctx.print(list, () =>
    list.length === 0
      ? 'no locations yet; ferry locations create --help shows how to add one'
      : table(list, [
          { header: 'LABEL', value: (l) => l.label },
          { header: 'PROVIDER', value: (l) => l.provider },
          {
            header: 'STATUS',
            value: (l) => l.status + (l.validation_error ? ` (${l.validation_error})` : ''),
          },
          { header: 'CREATED', value: (l) => time(l.created_at) },
          { header: 'ID', value: (l) => l.id },
        ]),
  );
}

function showProjection(p: LocationProjection): string {
  return fields([
    ['label', p.label],
    ['provider', p.provider],
    ['id', p.id],
    ['metadata', p.metadata ? JSON.stringify(p.metadata) : undefined],
  ]);
}

/** A secret from --secret-file (a JSON object; `-` reads stdin) or the access-key flags. */
function readSecret(argv: {
  secretFile?: string | undefined;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
}): unknown {
  if (argv.secretFile !== undefined) {
    const text = readFileSync(argv.secretFile === '-' ? 0 : argv.secretFile, 'utf8');
    try {
      return JSON.parse(text);
    } catch {
      throw usageError(`${argv.secretFile === '-' ? 'stdin' : argv.secretFile} is not JSON`);
    }
  }
  if (argv.accessKeyId !== undefined && argv.secretAccessKey !== undefined)
    return { access_key_id: argv.accessKeyId, secret_access_key: argv.secretAccessKey };
  throw usageError(
    'give the secret with --secret-file FILE (or - for stdin), or --access-key-id and --secret-access-key',
  );
}

function readMetadata(argv: {
  endpoint?: string | undefined;
  region?: string | undefined;
  meta?: string[] | undefined;
}): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  if (argv.endpoint !== undefined) out.endpoint = argv.endpoint;
  if (argv.region !== undefined) out.region = argv.region;
  for (const pair of argv.meta ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usageError(`--meta takes KEY=VALUE, got "${pair}"`);
    const raw = pair.slice(eq + 1);
    // true/false/numbers are JSON values (force_path_style is a boolean); anything else is a string.
    out[pair.slice(0, eq)] = /^(true|false|-?\d+(\.\d+)?)$/.test(raw) ? JSON.parse(raw) : raw;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

const secretOptions = {
  'secret-file': { type: 'string', describe: 'the secret as a JSON object (docs/api.md); - reads stdin' },
  'access-key-id': { type: 'string', describe: 'access-key providers: the access key id' },
  'secret-access-key': {
    type: 'string',
    describe: 'with --access-key-id (visible to ps; prefer --secret-file)',
  },
  endpoint: { type: 'string', describe: 'metadata.endpoint: another server (self-hosted S3, an emulator)' },
  region: { type: 'string', describe: 'metadata.region' },
  meta: { type: 'string', array: true, describe: 'another metadata KEY=VALUE (repeatable)' },
} as const;

export function locationCommands(cli: Cli): Cli {
  /** A subcommand that takes one location and nothing else. */
  const named = (
    y: Cli,
    verb: string,
    describe: string,
    run: (ctx: Context, name: string) => Promise<void>,
  ): Cli =>
    y.command(
      `${verb} <location>`,
      describe,
      (c) => c.positional('location', { type: 'string', demandOption: true, describe: 'label or id' }),
      (argv) => run(contextFor(argv), argv.location),
    );
  return cli.command(
    'locations',
    'stored storage credentials: list (default), get, status, refresh, create, …',
    (top) => {
      let y = top.command(
        ['list', '$0'],
        'list the locations, oldest first',
        (c) => c,
        (argv) => printLocations(contextFor(argv)),
      );
      y = named(y, 'get', 'show a location', async (ctx, name) => {
        const p = await ctx.api().send('POST', '/v1/locations/get', { body: locationRef(name) });
        ctx.print(p, () => showProjection(p));
      });
      y = named(y, 'status', "show a location's health (OAuth refresh state)", async (ctx, name) => {
        const s = await ctx.api().send('POST', '/v1/locations/status', { body: locationRef(name) });
        ctx.print(s, () =>
          fields(
            Object.entries(s).map(
              ([k, v]) => [k, k.endsWith('_at') && typeof v === 'string' ? time(v) : String(v)] as const,
            ),
          ),
        );
      });
      y = named(y, 'refresh', 'ask the refresher to renew an OAuth location now', async (ctx, name) => {
        // The API accepts a refresh of static credentials and does nothing (docs/api.md, "Locations"):
        // saying "requested" there would be untrue, so the provider is read first.
        const p = await ctx.api().send('POST', '/v1/locations/get', { body: locationRef(name) });
        if (!(OAUTH_PROVIDERS as readonly string[]).includes(p.provider)) {
          ctx.print(
            { refresh_requested: false },
            () => `${name} (${p.provider}) holds credentials that do not expire: there is nothing to refresh`,
          );
          return;
        }
        await ctx.api().send('POST', '/v1/locations/refresh', { body: locationRef(name) });
        ctx.print(
          { refresh_requested: true },
          () => `refresh of ${name} requested; ferry locations status ${name} shows the result`,
        );
      });
      y = named(
        y,
        'delete',
        'delete a location (irreversible; work that uses it fails)',
        async (ctx, name) => {
          await ctx.api().send('DELETE', '/v1/locations', { body: locationRef(name) });
          ctx.print({ deleted: true }, () => `deleted ${name}`);
        },
      );
      return y
        .command(
          'create',
          'store a new location',
          (c) =>
            c
              .option('provider', {
                type: 'string',
                demandOption: true,
                describe: 's3, r2, wasabi, b2, azureblob, gcs, dropbox, drive, onedrive, box',
              })
              .option('label', { type: 'string', demandOption: true, describe: 'the name you address it by' })
              .options(secretOptions)
              .example(
                '$0 locations create --provider s3 --label photos --secret-file s3.json --region eu-west-1',
                '',
              ),
          async (argv) => {
            const ctx = contextFor(argv);
            const metadata = readMetadata(argv);
            const body: BodyOf<'POST', '/v1/locations'> = {
              // As typed: the server checks it, and its refusal lists the providers.
              provider: argv.provider as BodyOf<'POST', '/v1/locations'>['provider'],
              label: argv.label,
              secret: readSecret(argv),
              ...(metadata ? { metadata } : {}),
            };
            const p = await ctx.api().send('POST', '/v1/locations', { body });
            ctx.print(p, () => `created\n${showProjection(p)}`);
          },
        )
        .command(
          'rename <location> <label>',
          'change a location’s label',
          (c) =>
            c
              .positional('location', { type: 'string', demandOption: true })
              .positional('label', { type: 'string', demandOption: true }),
          async (argv) => {
            const ctx = contextFor(argv);
            const p = await ctx.api().send('PATCH', '/v1/locations', {
              body: { ...locationRef(argv.location), label: argv.label },
            });
            ctx.print(p, () => showProjection(p));
          },
        )
        .command(
          'set-secret <location>',
          'replace a location’s secret (and metadata, when given); makes it active again',
          (c) => c.positional('location', { type: 'string', demandOption: true }).options(secretOptions),
          async (argv) => {
            const ctx = contextFor(argv);
            const metadata = readMetadata(argv);
            const body = {
              ...locationRef(argv.location),
              secret: readSecret(argv),
              ...(metadata ? { metadata } : {}),
            };
            const p = await ctx.api().send('PUT', '/v1/locations', { body });
            ctx.print(p, () => `secret replaced\n${showProjection(p)}`);
          },
        );
    },
  );
}
