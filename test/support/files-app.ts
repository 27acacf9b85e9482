// The server of the tests of `/v1/files` and of what clients do to its connections (test/http/files,
// memory-budget, keyless-limits): a real app listening on a port of the system's choice, since those
// tests speak raw HTTP and hold sockets, with an s3 location on s3rver and a bucket seeded for the file.
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from './app.js';
import type { TestDatabase } from './databases.js';
import { unique } from './fixtures.js';
import { type S3rverHandle, startS3rver } from './s3rver.js';
import { createLocation, s3Client, seedBucket } from './transfers.js';

export interface FilesApp {
  t: TestApp;
  s3: S3rverHandle;
  port: number;
  /** `http://127.0.0.1:PORT` */
  base: string;
  /** The seeded bucket on s3rver. */
  bucket: string;
  /** The s3 location's id and label. */
  id: string;
  label: string;
  close(): Promise<void>;
}

/** Starts s3rver and the app (egress to 127.0.0.1 allowed, `env` on top), listening, with the location. */
export async function startFilesApp(
  database: TestDatabase,
  env: Record<string, string>,
  seed: Record<string, string | Buffer>,
): Promise<FilesApp> {
  const s3 = await startS3rver();
  const t = await startTestApp(database, { env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', ...env } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (t.app.server.address() as AddressInfo).port;
  const client = s3Client(s3.endpoint);
  const bucket = await seedBucket(client, seed);
  client.destroy();
  const { id, label } = await createLocation((o) => t.request(o), {
    provider: 's3',
    secret: { access_key_id: 'AKID', secret_access_key: unique('secret') },
    metadata: { endpoint: s3.endpoint },
  });
  return {
    t,
    s3,
    port,
    base: `http://127.0.0.1:${port}`,
    bucket,
    id,
    label,
    async close() {
      await t.close();
      await s3.close();
    },
  };
}
