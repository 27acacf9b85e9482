// The `ferry` program: serve | migrate | keys create. Settings come from FERRY_* variables.
// Commands that need only the database (keys create, migrate) do not load the storage SDKs: the
// server is imported when `serve` runs.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import { migrateToLatest, openDatabase } from './db/database.js';
import { ApiKeys } from './domain/api-keys.js';
import { parseRfc3339, systemClock } from './domain/clock.js';
import { ensureWorkspace } from './domain/workspaces.js';
import { FerryError } from './errors.js';
import { createLogger } from './log.js';

const USAGE = `usage:
  ferry serve                      start the HTTP service (and background work)
  ferry migrate                    bring the database schema up to date
  ferry keys create --workspace NAME [--name LABEL] [--expires-at RFC3339] [--json]
                                   create an API key (and the workspace if it is new)

Settings are FERRY_* environment variables; see README.md.`;

async function keysCreate(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      workspace: { type: 'string' },
      name: { type: 'string' },
      'expires-at': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.workspace) throw new FerryError('invalid', '--workspace NAME is required');
  const config = loadConfig();
  const db = openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    await migrateToLatest(db);
    const workspace = await ensureWorkspace(db.kysely, values.workspace, systemClock);
    const expiresAt = values['expires-at'];
    const created = await new ApiKeys(db.kysely, systemClock).create(workspace.id, {
      name: values.name ?? 'cli',
      ...(expiresAt === undefined ? {} : { expiresAt: parseRfc3339(expiresAt, '--expires-at') }),
    });
    if (values.json) {
      const { id, name, expires_at, token } = created;
      process.stdout.write(
        `${JSON.stringify({ id, name, workspace: workspace.name, ...(expires_at ? { expires_at } : {}), token })}\n`,
      );
    } else {
      process.stdout.write(`${created.token}\n`);
    }
  } finally {
    await db.close();
  }
}

async function migrate(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const db = openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    const applied = await migrateToLatest(db);
    logger.info({ database: db.description, applied }, 'database is up to date');
  } finally {
    await db.close();
  }
}

export async function main(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
  if (command === 'serve') {
    const config = loadConfig();
    const { serve } = await import('./server.js');
    return serve(config, createLogger(config.logLevel));
  }
  if (command === 'migrate') return migrate();
  if (command === 'keys' && sub === 'create') return keysCreate(rest);
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  throw new FerryError('invalid', `unknown command "${[command, sub].filter(Boolean).join(' ')}"\n${USAGE}`);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const known =
    err instanceof ConfigError ||
    err instanceof FerryError ||
    (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`ferry: ${known ? (err as Error).message : String((err as Error)?.stack ?? err)}\n`);
  process.exit(known ? 2 : 1);
});
