// Master-key rotation (docs/security.md, "Rotating the master key"): every sealed secret that is not
// under the current master key has its data key re-wrapped by it, a batch of rows per transaction,
// while the service runs. The records themselves are the progress: each names the key that sealed it,
// so a rotation stopped anywhere and run again continues with what is left, with no table of its own.
//
// A row is written only if it still holds the value that was read (compare-and-set): a secret the
// service replaced meanwhile (PUT /v1/locations, the OAuth refresher's new tokens, both sealed under the
// current key by processes that have it) is kept, never overwritten with the stale one re-wrapped.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import type { Keyring } from '../crypto/envelope.js';
import type { Database } from '../db/schema.js';
import { FerryError } from '../errors.js';
import { secretContext } from './webhooks/webhooks.js';

/** A column of sealed secrets, and what each record is bound to (src/crypto/envelope.ts). */
interface SealedColumn {
  table: 'locations' | 'webhooks';
  context(id: string): string;
}

/** Every column that holds records of src/crypto/envelope.ts. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'locations', context: (id) => id },
  { table: 'webhooks', context: secretContext },
];

export interface SealedRow {
  id: string;
  secret_envelope: string;
}

/** How many records of a table one master key sealed. */
export interface KeyCount {
  table: SealedColumn['table'];
  /** The key's public id (src/crypto/envelope.ts, MasterKey.id). */
  key: string;
  records: number;
}

/** The master key id of a record: "v1." and then 16 hex digits. */
const keyOf = sql<string>`substr(secret_envelope, 4, 16)`;

/** Records per table and master key, largest first. */
export async function census(db: Kysely<Database>): Promise<KeyCount[]> {
  const counts: KeyCount[] = [];
  for (const { table } of SEALED_COLUMNS) {
    const rows = await db
      .selectFrom(table)
      .select([keyOf.as('key'), (eb) => eb.fn.countAll<number>().as('records')])
      .groupBy(keyOf)
      .execute();
    for (const row of rows) counts.push({ table, key: row.key, records: Number(row.records) });
  }
  return counts.sort((a, b) => b.records - a.records);
}

/** The next rows of a table after `after` (by id) whose records are not under the current key. */
export function nextBatch(
  db: Kysely<Database>,
  column: SealedColumn,
  keyring: Keyring,
  after: string | undefined,
  size: number,
): Promise<SealedRow[]> {
  let query = db
    .selectFrom(column.table)
    .select(['id', 'secret_envelope'])
    .where(keyOf, '<>', keyring.currentId)
    .orderBy('id')
    .limit(size);
  if (after !== undefined) query = query.where('id', '>', after);
  return query.execute();
}

/**
 * Re-wraps the rows read by nextBatch in one transaction. The crypto is done before the transaction
 * opens, so it holds its row locks only for the writes. `changed`: rows that held another value by
 * then (or were deleted), left as they are.
 */
export async function resealBatch(
  db: Kysely<Database>,
  column: SealedColumn,
  keyring: Keyring,
  rows: readonly SealedRow[],
): Promise<{ resealed: number; changed: number }> {
  const writes = rows.map((row) => ({ row, next: rewrap(column, keyring, row) }));
  return db.transaction().execute(async (trx) => {
    let resealed = 0;
    for (const { row, next } of writes) {
      const result = await trx
        .updateTable(column.table)
        .set({ secret_envelope: next })
        .where('id', '=', row.id)
        .where('secret_envelope', '=', row.secret_envelope)
        .executeTakeFirst();
      resealed += Number(result.numUpdatedRows);
    }
    return { resealed, changed: rows.length - resealed };
  });
}

function rewrap(column: SealedColumn, keyring: Keyring, row: SealedRow): string {
  try {
    return keyring.rewrap(row.secret_envelope, column.context(row.id));
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new FerryError('conflict', `the secret of ${singular(column.table)} ${row.id}: ${reason}`, {
      cause,
    });
  }
}

const singular = (table: SealedColumn['table']) => (table === 'locations' ? 'location' : 'webhook');

export interface RotationProgress {
  table: SealedColumn['table'];
  /** Rows of the table handled so far in this run (re-wrapped or found changed). */
  done: number;
  /** Rows of the table under previous keys when the run began. */
  total: number;
}

export interface RotationOptions {
  batchSize: number;
  /** Checked between batches: an aborted run stops after the batch it is in (it can be run again). */
  signal?: AbortSignal;
  onProgress?: (progress: RotationProgress) => void | Promise<void>;
}

export interface RotationResult {
  /** The id of the key every record is re-wrapped by. */
  currentKey: string;
  /** What was there when the run began, by table and key. */
  before: KeyCount[];
  resealed: number;
  /** Rows the service changed between their read and their write: left as the service wrote them. */
  changed: number;
  /** Records still under a key other than the current one when the run ended. */
  remaining: KeyCount[];
  interrupted: boolean;
}

/**
 * Re-wraps every record not under the keyring's current key. Refuses, before changing anything, when a
 * record is under a key the keyring does not hold (the error names the key's id, never a key).
 */
export async function rotateMasterKey(
  db: Kysely<Database>,
  keyring: Keyring,
  options: RotationOptions,
): Promise<RotationResult> {
  const before = await census(db);
  const unknown = before.filter((c) => !keyring.has(c.key));
  if (unknown.length > 0) {
    const list = unknown.map((c) => `${c.records} ${c.table} under master key ${c.key}`).join(', ');
    throw new FerryError(
      'conflict',
      `${list}: a key that is neither FERRY_MASTER_KEY nor in FERRY_MASTER_KEY_PREVIOUS; add it to FERRY_MASTER_KEY_PREVIOUS (nothing was changed)`,
    );
  }
  let resealed = 0;
  let changed = 0;
  let interrupted = false;
  for (const column of SEALED_COLUMNS) {
    const total = before
      .filter((c) => c.table === column.table && c.key !== keyring.currentId)
      .reduce((sum, c) => sum + c.records, 0);
    let done = 0;
    let after: string | undefined;
    for (;;) {
      // better-sqlite3 answers synchronously, so a run of batches never leaves the microtask queue: a
      // turn of the event loop between batches lets a signal (Ctrl-C) be seen, and the process's other
      // work (an HTTP server beside it) go on.
      await nextTurn();
      if (options.signal?.aborted) {
        interrupted = true;
        break;
      }
      const rows = await nextBatch(db, column, keyring, after, options.batchSize);
      if (rows.length === 0) break;
      const batch = await resealBatch(db, column, keyring, rows);
      resealed += batch.resealed;
      changed += batch.changed;
      done += rows.length;
      after = rows[rows.length - 1]?.id;
      await options.onProgress?.({ table: column.table, done, total });
    }
    if (interrupted) break;
  }
  const remaining = (await census(db)).filter((c) => c.key !== keyring.currentId);
  return { currentKey: keyring.currentId, before, resealed, changed, remaining, interrupted };
}
