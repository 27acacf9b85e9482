// src/queue/claim.ts: the one claim statement of every durable queue, on both databases. Claimers that
// race on one table each get at most their limit, and no row is claimed twice.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type Db, openDatabase } from '../../src/db/database.js';
import { claimRows, skipLocked } from '../../src/queue/claim.js';
import { Secret } from '../../src/secret.js';
import { createSchema, testDatabases } from '../support/databases.js';

interface Row {
  part: string;
  n: number;
  owner: string | null;
}

for (const database of await testDatabases()) {
  describe(`one claim statement [${database.name}]`, { skip: database.skip }, () => {
    let db: Db;
    let cleanup: () => Promise<void>;

    before(async () => {
      if (database.name === 'postgres') {
        const schema = await createSchema();
        db = openDatabase({ databaseUrl: new Secret(schema.url), dataDir: '', poolSize: 10 });
        cleanup = schema.drop;
      } else {
        const dir = mkdtempSync(join(tmpdir(), 'ferry-claim-'));
        db = openDatabase({ dataDir: dir, databaseUrl: undefined });
        cleanup = async () => rmSync(dir, { recursive: true, force: true });
      }
      await sql`create table claim_rows (part text not null, n integer not null, owner text,
        primary key (part, n))`.execute(db.kysely);
    });

    after(async () => {
      await db?.close();
      await cleanup?.();
    });

    const claim = (owner: string, part: string, limit: number) =>
      claimRows<Row>(db.kysely, {
        table: 'claim_rows',
        keys: ['part', 'n'],
        within: sql`part = ${part}`,
        pick: sql`select part, n from claim_rows where part = ${part} and owner is null
          order by n limit ${limit} ${skipLocked(db.dialect)}`,
        set: sql`owner = ${owner}`,
      });

    test('eight claimers racing over 300 rows: each claim at most its limit, every row claimed once', async () => {
      const values = Array.from({ length: 300 }, (_, n) => sql`(${'a'}, ${n}, null)`);
      await sql`insert into claim_rows (part, n, owner) values ${sql.join(values)}`.execute(db.kysely);
      await sql`insert into claim_rows (part, n, owner) values (${'b'}, ${0}, null)`.execute(db.kysely);
      const claimed: number[] = [];
      const sizes: number[] = [];
      await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          for (;;) {
            const rows = await claim(`claimer-${i}`, 'a', 7);
            if (rows.length === 0) return;
            sizes.push(rows.length);
            for (const row of rows) {
              assert.equal(row.owner, `claimer-${i}`, 'the row comes back as the claim left it');
              claimed.push(Number(row.n));
            }
          }
        }),
      );
      assert.ok(Math.max(...sizes) <= 7, `a claim took ${Math.max(...sizes)} rows with a limit of 7`);
      assert.equal(claimed.length, 300);
      assert.equal(new Set(claimed).size, 300, 'no row claimed twice');
      const other = await sql<Row>`select * from claim_rows where part = ${'b'}`.execute(db.kysely);
      assert.equal(other.rows[0]?.owner, null, 'a row outside `within` is left alone');
    });
  });
}
