// The commands that run beside the database rather than against the HTTP API: `serve`, `migrate`,
// `keys create --workspace NAME` and `keys rotate-master`. They read the same FERRY_* settings as the
// server. This module (and with it the database drivers) is loaded only when one of them runs, so the
// client starts fast.
import { parseArgs } from 'node:util';
import type { Scope } from '../api/scopes.js';
import { parseRfc3339, systemClock } from '../clock.js';
import { loadConfig } from '../config.js';
import { loadKeyring } from '../crypto/master-key.js';
import { migrateToLatest, openDatabase } from '../db/database.js';
import { ApiKeys } from '../domain/api-keys.js';
import { type KeyCount, type RotationResult, rotateMasterKey } from '../domain/master-key-rotation.js';
import { ensureWorkspace } from '../domain/workspaces.js';
import { FerryError } from '../errors.js';
import { createLogger, logProcessWarnings } from '../log.js';
import { CliError, EXIT } from './exit.js';
import { locationIds } from './scopes.js';

export interface LocalKeyOptions {
  workspace: string;
  name: string;
  expiresAt?: string;
  /** What the key may do; absent: everything. */
  scopes?: Scope[];
  /** The only locations it may address, by label or id; absent: all. */
  locations?: string[];
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
    const seen =
      options.locations === undefined
        ? []
        : await db.kysely
            .selectFrom('locations')
            .select(['id', 'label'])
            .where('workspace_id', '=', workspace.id)
            .execute();
    const created = await new ApiKeys(db.kysely, systemClock).create(workspace.id, {
      name: options.name,
      ...(parsedExpiry === undefined ? {} : { expiresAt: parsedExpiry }),
      ...(options.scopes === undefined ? {} : { scopes: options.scopes }),
      ...(options.locations === undefined ? {} : { locations: locationIds(options.locations, seen) }),
    });
    if (options.json) {
      const { id, name, expires_at, scopes, locations, token } = created;
      process.stdout.write(
        `${JSON.stringify({ id, name, workspace: workspace.name, ...(expires_at ? { expires_at } : {}), scopes, ...(locations ? { locations } : {}), token })}\n`,
      );
    } else {
      process.stdout.write(`${created.token}\n`);
    }
  } finally {
    await db.close();
  }
}

export interface RotateMasterOptions {
  batchSize: number;
  json: boolean;
}

const describeCounts = (counts: KeyCount[]) =>
  counts.map((c) => `${c.records} ${c.table} under ${c.key}`).join(', ');

const sum = (counts: KeyCount[]) => counts.reduce((n, c) => n + c.records, 0);

/**
 * Re-wraps every sealed secret under FERRY_MASTER_KEY (docs/security.md, "Rotating the master key"),
 * with the service running. Progress goes to stderr, the outcome to stdout. Ctrl-C (or SIGTERM) stops
 * after the batch in hand; running it again continues. Fails (exit 1) unless every record ends under
 * the current key.
 */
export async function keysRotateMasterLocal(options: RotateMasterOptions): Promise<void> {
  const config = loadConfig();
  const keyring = loadKeyring(config.dataDir, config.masterKey, config.previousMasterKeys, {
    generate: false,
  });
  const db = openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let result: RotationResult;
  try {
    await migrateToLatest(db);
    result = await rotateMasterKey(db.kysely, keyring, {
      batchSize: options.batchSize,
      signal: stop.signal,
      onProgress: ({ table, done, total }) => {
        process.stderr.write(`${table}: ${done} of ${total} re-wrapped under ${keyring.currentId}\n`);
      },
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await db.close();
  }
  const left = sum(result.remaining);
  if (options.json) {
    const { currentKey, before, resealed, changed, remaining, interrupted } = result;
    process.stdout.write(
      `${JSON.stringify({ current_key: currentKey, before, resealed, changed, remaining, interrupted })}\n`,
    );
  } else {
    process.stdout.write(
      `${result.resealed} re-wrapped under master key ${result.currentKey}, ${result.changed} changed by the service meanwhile (kept as it wrote them); ${left} remain under earlier keys\n`,
    );
  }
  if (left > 0) {
    const where = `${left} records are still under earlier keys (${describeCounts(result.remaining)})`;
    // Not interrupted: they were sealed during the run, by a process that still has an earlier key as
    // its FERRY_MASTER_KEY (docs/security.md, "Rotating the master key", step 3).
    throw new CliError(
      result.interrupted
        ? `interrupted: ${where}; run ferry keys rotate-master again to continue`
        : `${where}: a process sealed them during the run with an earlier key as its FERRY_MASTER_KEY; restart it with the new key and run ferry keys rotate-master again`,
      EXIT.failure,
    );
  }
  if (!options.json && config.previousMasterKeys.length > 0) {
    process.stdout.write(
      'every secret is under the current key: remove FERRY_MASTER_KEY_PREVIOUS from the settings of every process and restart them\n',
    );
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
