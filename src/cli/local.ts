// The commands that run beside the database rather than against the HTTP API: `serve`, `migrate` and
// `keys create --workspace NAME`. They read the same FERRY_* settings as the server. This module (and
// with it the database drivers) is loaded only when one of them runs, so the client starts fast.
import { parseArgs } from 'node:util';
import type { Scope } from '../api/keys.js';
import { parseRfc3339, systemClock } from '../clock.js';
import { loadConfig } from '../config.js';
import { migrateToLatest, openDatabase } from '../db/database.js';
import { ApiKeys } from '../domain/api-keys.js';
import { ensureWorkspace } from '../domain/workspaces.js';
import { FerryError } from '../errors.js';
import { createLogger, logProcessWarnings } from '../log.js';

export interface LocalKeyOptions {
  workspace: string;
  name: string;
  expiresAt?: string;
  /** What the key may do; absent: everything. */
  scopes?: Scope[];
  json: boolean;
}

/**
 * Creates a key in the database (and the workspace if it is new); prints it bare or as one JSON object.
 * The operator's door: the key may have any scopes.
 */
export async function keysCreateLocal(options: LocalKeyOptions): Promise<void> {
  const config = loadConfig();
  const db = openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    await migrateToLatest(db);
    const expiresAt = options.expiresAt;
    const parsedExpiry = expiresAt === undefined ? undefined : parseRfc3339(expiresAt, '--expires-at');
    const workspace = await ensureWorkspace(db.kysely, options.workspace, systemClock);
    const created = await new ApiKeys(db.kysely, systemClock).create(workspace.id, {
      name: options.name,
      ...(parsedExpiry === undefined ? {} : { expiresAt: parsedExpiry }),
      ...(options.scopes === undefined ? {} : { scopes: options.scopes }),
    });
    if (options.json) {
      const { id, name, expires_at, scopes, token } = created;
      process.stdout.write(
        `${JSON.stringify({ id, name, workspace: workspace.name, ...(expires_at ? { expires_at } : {}), scopes, token })}\n`,
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
