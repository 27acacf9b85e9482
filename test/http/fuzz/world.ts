// The world the HTTP fuzzer sends its requests into: a test app on one database, with two s3 locations
// on a real s3rver (so list, copy, move, remove, share and send reach a store), two locations that share
// the label "dup" (the ambiguous-name 409), a local SMTP server (so send does not answer 503), and one
// row of each kind a path parameter can name (a key, a transfer, a job, a share, a send, a webhook).
//
// Generated requests name these rows through placeholders (`@@locA@@`), filled in when the request is
// sent: a request that deletes or renames a fixture is allowed to succeed, and heal() puts the world
// back before the next one, so the fuzzer keeps reaching the stores all run long.
//
// snapshot() reads the rows of the main tables, so a test can tell that a rejected request changed
// nothing. Columns that change without a request asking for it (a key's last use, a location's health
// after a provider answered) and the rate limiters' own tables are left out.
import assert from 'node:assert/strict';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import { ManualClock, startTestApp, type TestApp } from '../../support/app.js';
import type { TestDatabase } from '../../support/databases.js';
import { type S3rverHandle, startS3rver } from '../../support/s3rver.js';
import { TestSmtp } from '../../support/smtp.js';

/** The bucket on s3rver every fixture location sees, and what it holds (short names, see OBJECTS). */
export const BUCKET = 'fuzz';
/** Object keys in BUCKET. Short on purpose: see the note on patterns in arbitraries.ts. */
export const OBJECTS = ['a.txt', 'b.txt', 'dir/c.md', 'dir/d e.bin', 'é.txt'];

export const LABELS = { a: 'fz-a', b: 'fz-b', dup: 'dup' } as const;

/** The placeholders generated requests may hold, and what each stands for. */
export type Placeholder =
  | 'locA'
  | 'locB'
  | 'dup1'
  | 'victimKey'
  | 'transfer'
  | 'job'
  | 'share'
  | 'send'
  | 'webhook'
  | 's3'
  | 'smtp';

const PLACEHOLDER = /@@(\w+)@@/g;

/** Tables whose rows a rejected request must leave alone, with the columns that may move anyway. */
const WATCHED: Record<string, string[]> = {
  workspaces: [],
  api_keys: ['last_used_at'],
  locations: [
    'status',
    'validation_error',
    'failure_reason',
    'last_refresh_error',
    'refresh_lease_owner',
    'refresh_lease_expires_at',
  ],
  transfers: [],
  jobs: [],
  job_manifests: [],
  job_objects: [],
  shares: [],
  sends: [],
  webhooks: [],
  webhook_messages: [],
};

interface FixtureLocation {
  label: string;
  id: string;
  /** What heal() compares with: the row as created (or last restored). */
  version: number;
  metadata: string | null;
}

export class World {
  readonly ids = new Map<Placeholder, string>();
  #fixtures: Record<'locA' | 'locB' | 'dup1' | 'dup2', FixtureLocation> | undefined;

  private constructor(
    readonly t: TestApp,
    /** Moved on by the fuzzer between requests, so that rolling-window limits do not fill up. */
    readonly clock: ManualClock,
    readonly s3: S3rverHandle,
    readonly smtp: TestSmtp,
    /** The key every generated request uses unless it tests authentication. */
    readonly token: string,
    readonly revokedToken: string,
  ) {}

  static async start(database: TestDatabase): Promise<World> {
    const s3 = await startS3rver();
    const smtp = await new TestSmtp().start();
    const clock = new ManualClock(Date.now());
    const t = await startTestApp(database, {
      clock,
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_SMTP_URL: smtp.url },
    });
    await seedBucket(s3.endpoint);
    // The fuzzer's own key is not the bootstrap key and its id is never generated, so no request can
    // revoke the key the run depends on.
    const key = await t.request({ method: 'POST', url: '/v1/tokens', payload: { name: 'fuzzer' } });
    assert.equal(key.statusCode, 201, key.body);
    const revoked = await t.request({ method: 'POST', url: '/v1/tokens', payload: { name: 'revoked' } });
    await t.request({ method: 'DELETE', url: `/v1/tokens/${revoked.json().id}` });
    const world = new World(t, clock, s3, smtp, key.json().token, revoked.json().token);
    world.ids.set('s3', s3.endpoint);
    world.ids.set('smtp', smtp.url);
    await world.#createFixtures();
    return world;
  }

  async close(): Promise<void> {
    await this.t.close();
    await this.smtp.close();
    await this.s3.close();
  }

  /** The bootstrap-key request helper with the fuzzer's key. */
  call(method: string, url: string, payload?: unknown) {
    return this.t.request({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      token: this.token,
    });
  }

  /** Replaces every `@@name@@` in `text` with the fixture it names. */
  fill(text: string): string {
    return text.replace(PLACEHOLDER, (whole, name: string) => this.ids.get(name as Placeholder) ?? whole);
  }

  async #location(label: string): Promise<FixtureLocation> {
    const res = await this.call('POST', '/v1/locations', {
      provider: 's3',
      label,
      secret: { access_key_id: 'fuzzer', secret_access_key: 'fuzzer-secret' },
      metadata: { endpoint: this.s3.endpoint },
    });
    assert.equal(res.statusCode, 201, res.body);
    return { label, id: res.json().id, ...(await this.#stored(res.json().id)) };
  }

  async #stored(id: string): Promise<{ version: number; metadata: string | null }> {
    const row = await this.t.services.db.kysely
      .selectFrom('locations')
      .select(['secret_version', 'metadata'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return { version: row.secret_version, metadata: row.metadata };
  }

  async #createFixtures(): Promise<void> {
    this.#fixtures = {
      locA: await this.#location(LABELS.a),
      locB: await this.#location(LABELS.b),
      dup1: await this.#location(LABELS.dup),
      dup2: await this.#location(LABELS.dup),
    };
    for (const [name, f] of Object.entries(this.#fixtures)) this.ids.set(name as Placeholder, f.id);
    const made = async (placeholder: Placeholder, method: string, url: string, payload: unknown) => {
      const res = await this.call(method, url, payload);
      assert.ok(res.statusCode < 300, `${method} ${url}: ${res.body}`);
      const body = res.json();
      this.ids.set(placeholder, body.id ?? body.job_id);
    };
    await made('victimKey', 'POST', '/v1/tokens', { name: 'victim' });
    await made('transfer', 'POST', '/v1/copy', {
      from: `${LABELS.a}:${BUCKET}/a.txt`,
      to: `${LABELS.b}:${BUCKET}/copy.txt`,
    });
    await made('job', 'POST', '/v1/copy', {
      from: `${LABELS.a}:${BUCKET}/dir/`,
      to: `${LABELS.b}:${BUCKET}/d2/`,
    });
    await made('share', 'POST', '/share', { file: `${LABELS.a}/${BUCKET}/a.txt` });
    await made('send', 'POST', '/send', { source: `${LABELS.a}/${BUCKET}/a.txt`, to: 'ann@example.com' });
    await made('webhook', 'POST', '/v1/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      events: ['transfer.complete'],
    });
  }

  /**
   * Puts the fixture locations back as they were (label, secret, endpoint), and renames any other
   * location that took a fixture label, so the next request meets the same world.
   */
  async heal(): Promise<void> {
    const fixtures = this.#fixtures;
    if (!fixtures) return;
    const rows = await this.t.services.db.kysely
      .selectFrom('locations')
      .select(['id', 'label', 'metadata', 'secret_version', 'provider'])
      .execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    const fixtureIds = new Set(Object.values(fixtures).map((f) => f.id));
    for (const row of rows) {
      if (fixtureIds.has(row.id)) continue;
      if (Object.values(LABELS).includes(row.label as 'dup')) {
        await this.call('PATCH', '/v1/locations', { id: row.id, label: 'moved-away' });
      }
    }
    for (const [name, fixture] of Object.entries(fixtures) as Array<[Placeholder, FixtureLocation]>) {
      const row = byId.get(fixture.id);
      if (!row) {
        const again = await this.#location(fixture.label);
        fixtures[name as 'locA'] = again;
        this.ids.set(name, again.id);
        continue;
      }
      if (row.label !== fixture.label) {
        await this.call('PATCH', '/v1/locations', { id: fixture.id, label: fixture.label });
      }
      if (row.secret_version !== fixture.version || row.metadata !== fixture.metadata) {
        const res = await this.call('PUT', '/v1/locations', {
          id: fixture.id,
          secret: { access_key_id: 'fuzzer', secret_access_key: 'fuzzer-secret' },
          metadata: { endpoint: this.s3.endpoint },
        });
        assert.equal(res.statusCode, 200, res.body);
        // The next heal compares with what the restore wrote.
        Object.assign(fixture, await this.#stored(fixture.id));
      }
    }
  }

  /** The watched rows, as one comparable text per table. */
  async snapshot(): Promise<Record<string, string>> {
    const db = this.t.services.db.kysely;
    const tables = await Promise.all(
      Object.entries(WATCHED).map(async ([table, ignored]) => {
        const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db)).rows;
        const texts = rows.map((row) => {
          const kept: Record<string, unknown> = {};
          for (const key of Object.keys(row).sort()) if (!ignored.includes(key)) kept[key] = row[key];
          return JSON.stringify(kept);
        });
        return [table, texts.sort().join('\n')] as const;
      }),
    );
    const out: Record<string, string> = Object.fromEntries(tables);
    return out;
  }
}

async function seedBucket(endpoint: string): Promise<void> {
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'seed', secretAccessKey: 'seed' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  try {
    await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
    for (const key of OBJECTS) {
      await client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: `body of ${key}`, ContentType: 'text/plain' }),
      );
    }
  } finally {
    client.destroy();
  }
}
