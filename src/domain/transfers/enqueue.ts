// Queueing a transfer: the one way a row enters the transfers table.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { newId } from '../ids.js';
import { encodeSpec, type TransferSpec } from './specs.js';

export interface Queued {
  id: string;
  status: 'queued';
}

export async function enqueueTransfer(
  db: Kysely<Database>,
  workspaceId: string,
  spec: TransferSpec,
  now: number,
): Promise<Queued> {
  const id = newId();
  await db
    .insertInto('transfers')
    .values({
      id,
      workspace_id: workspaceId,
      kind: spec.kind,
      status: 'queued',
      spec: encodeSpec(spec),
      bytes_total: null,
      error: null,
      lease_owner: null,
      lease_expires_at: null,
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
    })
    .execute();
  return { id, status: 'queued' };
}
