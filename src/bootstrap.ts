// First start (DECISIONS "Running it"): against an empty database, create the workspace `default`
// and one API key, and write the bare key to <data dir>/bootstrap-key (mode 0600). The log names the
// file, never the key.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureWorkspace } from './domain/workspaces.js';
import type { Services } from './services.js';

export const DEFAULT_WORKSPACE = 'default';

export async function bootstrapIfEmpty(services: Services): Promise<string | undefined> {
  const { db, clock, logger, config } = services;
  const any = await db.kysely.selectFrom('workspaces').select('id').limit(1).executeTakeFirst();
  if (any) return undefined;
  const workspace = await ensureWorkspace(db.kysely, DEFAULT_WORKSPACE, clock);
  const keys = await db.kysely
    .selectFrom('api_keys')
    .select('id')
    .where('workspace_id', '=', workspace.id)
    .limit(1)
    .executeTakeFirst();
  // Another process that raced us to an empty database made the key already.
  if (keys) return undefined;
  const created = await services.apiKeys.create(workspace.id, { name: 'bootstrap' });
  const file = join(config.dataDir, 'bootstrap-key');
  writeFileSync(file, `${created.token}\n`, { mode: 0o600 });
  logger.info({ file, workspace: DEFAULT_WORKSPACE }, 'created the first API key; read it from the file');
  return file;
}
