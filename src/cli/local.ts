// The commands that run beside the database rather than against the HTTP API: `serve`, `migrate` and
// `keys create --workspace NAME`. They read the same FERRY_* settings as the server. This module (and
// with it the database drivers) is loaded only when one of them runs, so the client starts fast.
import { parseArgs } from 'node:util';
import type { Scope } from '../api/keys.js';
import { parseRfc3339, systemClock, toRfc3339 } from '../clock.js';
import { loadConfig } from '../config.js';
import { migrateToLatest, openDatabase } from '../db/database.js';
import { ApiKeys } from '../domain/api-keys.js';
import { ensureWorkspace, findWorkspace } from '../domain/workspaces.js';
import { FerryError } from '../errors.js';
import { createLogger, logProcessWarnings } from '../log.js';
import { CliError, EXIT } from './exit.js';
import { time } from './format.js';
import { locationIds } from './scopes.js';

export interface LocalKeyOptions {
  workspace: string;
  name: string;
  expiresAt?: string;
  /** What the key may do; absent: everything. */
  scopes?: Scope[];
  /** Labels or ids of the workspace's locations the key may address; absent: every one. */
  locations?: string[];
  json: boolean;
}

/**
 * Creates a key in the database (and the workspace if it is new); prints it bare or as one JSON object.
 * The operator's door: the key may have any scopes and any of the workspace's locations.
 */
export async function keysCreateLocal(options: LocalKeyOptions): Promise<void> {
  const config = loadConfig();
  const db = openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    await migrateToLatest(db);
    const expiresAt = options.expiresAt;
    const parsedExpiry = expiresAt === undefined ? undefined : parseRfc3339(expiresAt, '--expires-at');
    // Locations name what is there already: a workspace made now has none, so it is not made for them.
    let locations: string[] | undefined;
    if (options.locations !== undefined) {
      const existing = await findWorkspace(db.kysely, options.workspace);
      if (!existing)
        throw new CliError(
          `the workspace "${options.workspace}" does not exist yet, so it has no locations for --location`,
          EXIT.notFound,
        );
      const rows = await db.kysely
        .selectFrom('locations')
        .select(['id', 'label', 'provider', 'created_at'])
        .where('workspace_id', '=', existing.id)
        .orderBy('created_at', 'asc')
        .orderBy('id', 'asc')
        .execute();
      const known = rows.map((r) => ({ ...r, created_at: toRfc3339(r.created_at) }));
      locations = locationIds(options.locations, known, time);
    }
    const workspace = await ensureWorkspace(db.kysely, options.workspace, systemClock);
    const created = await new ApiKeys(db.kysely, systemClock).create(workspace.id, {
      name: options.name,
      ...(parsedExpiry === undefined ? {} : { expiresAt: parsedExpiry }),
      ...(options.scopes === undefined ? {} : { scopes: options.scopes }),
      ...(locations === undefined ? {} : { locations }),
    });
    if (options.json) {
      const { id, name, expires_at, scopes, locations: limited, token } = created;
      process.stdout.write(
        `${JSON.stringify({ id, name, workspace: workspace.name, ...(expires_at ? { expires_at } : {}), scopes, ...(limited ? { locations: limited } : {}), token })}\n`,
      );
    } else {
      process.stdout.write(`${created.token}\n`);
    }
  } finally {
    await db.close();
  }
}

export async function migrate(): Promise<void> {
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

export async function serve(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  logProcessWarnings(logger);
  const { serve: run } = await import('../server.js');
  return run(config, logger);
}

/** `serve` and `migrate` take no arguments; anything after them is a mistake, not something to ignore. */
export function noArguments(command: string, args: string[]): void {
  const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
  if (positionals.length > 0) throw new FerryError('invalid', `${command} takes no arguments`);
}
