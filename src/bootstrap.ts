// First start (README, "First steps"): against an empty database, create the workspace `default`
// and one API key, and write the bare key to <data dir>/bootstrap-key (mode 0600). The log names the
// file, never the key.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDataDir, PRIVATE_FILE_MODE } from './data-dir.js';
import { newId } from './ids.js';
import type { Services } from './services.js';

export const DEFAULT_WORKSPACE = 'default';

export async function bootstrapIfEmpty(services: Services): Promise<string | undefined> {
  const { db, clock, logger, config } = services;
  const any = await db.kysely.selectFrom('workspaces').select('id').limit(1).executeTakeFirst();
  if (any) return undefined;
  // Processes starting together on an empty database race here: only the one whose insert creates
  // the workspace makes the key.
  const created = await db.kysely
    .insertInto('workspaces')
    .values({ id: newId(), name: DEFAULT_WORKSPACE, created_at: clock.now() })
    .onConflict((oc) => oc.column('name').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!created) return undefined;
  const key = await services.apiKeys.create(created.id, { name: 'bootstrap' });
  const file = join(config.dataDir, 'bootstrap-key');
  ensureDataDir(config.dataDir);
  writeFileSync(file, `${key.token}\n`, { mode: PRIVATE_FILE_MODE });
  // The mode above applies only to a file that is new; one left from an earlier database is tightened.
  chmodSync(file, PRIVATE_FILE_MODE);
  logger.info({ file, workspace: DEFAULT_WORKSPACE }, 'created the first API key; read it from the file');
  return file;
}
