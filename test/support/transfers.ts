// Helpers for transfer tests: a fresh workspace per test (the copy limit is per workspace), locations
// on the local servers, seeding and reading objects with the providers' own SDKs, and polling.
import assert from 'node:assert/strict';
import type { S3Client } from '@aws-sdk/client-s3';
import type { BlobServiceClient } from '@azure/storage-blob';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { ensureWorkspace } from '../../src/domain/workspaces.js';
import { awsS3, azureBlob } from '../../src/stores/shared/sdk.js';
import type { TestApp } from './app.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type AzuriteHandle } from './azurite.js';
import { unique } from './fixtures.js';
import { HANG_MS, waitUntil } from './wait.js';

export type Call = (options: InjectOptions) => Promise<LightMyRequestResponse>;

/** A new workspace with its own key: its own copy limit, its own transfers. */
export async function newWorkspace(t: TestApp): Promise<Call> {
  const workspace = await ensureWorkspace(t.services.db.kysely, unique('ws'), t.services.clock);
  const key = await t.services.apiKeys.create(workspace.id, { name: 'test' });
  return (options) => t.request({ ...options, token: key.token });
}

export async function createLocation(
  call: Call,
  body: {
    provider: string;
    secret: Record<string, unknown>;
    metadata?: Record<string, unknown>;
    label?: string;
  },
): Promise<{ id: string; label: string }> {
  const label = body.label ?? unique(body.provider);
  const res = await call({ method: 'POST', url: '/v1/locations', payload: { ...body, label } });
  assert.equal(res.statusCode, 201, res.body);
  return { id: res.json().id, label };
}

export function s3Client(endpoint: string): S3Client {
  const { S3Client } = awsS3();
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'seed', secretAccessKey: 'seed' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export async function seedBucket(
  client: S3Client,
  objects: Record<string, string | Buffer>,
): Promise<string> {
  const { CreateBucketCommand, PutObjectCommand } = awsS3();
  const bucket = unique('b').toLowerCase();
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  await Promise.all(
    Object.entries(objects).map(([Key, Body]) =>
      client.send(new PutObjectCommand({ Bucket: bucket, Key, Body })),
    ),
  );
  return bucket;
}

export async function readS3(client: S3Client, bucket: string, key: string): Promise<Buffer | undefined> {
  const { GetObjectCommand } = awsS3();
  try {
    const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return Buffer.from(
      await (res.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
    );
  } catch (err) {
    if ((err as { name?: string }).name === 'NoSuchKey') return undefined;
    throw err;
  }
}

export function azureService(azurite: AzuriteHandle): BlobServiceClient {
  const { BlobServiceClient, StorageSharedKeyCredential } = azureBlob();
  return new BlobServiceClient(
    azurite.endpoint,
    new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
  );
}

export async function readAzure(
  service: BlobServiceClient,
  container: string,
  name: string,
): Promise<Buffer | undefined> {
  try {
    return await service.getContainerClient(container).getBlobClient(name).downloadToBuffer();
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return undefined;
    throw err;
  }
}

const TERMINAL = new Set(['complete', 'failed', 'partial', 'canceled']);

/** Polls a transfer or job until it ends (or `until` holds), and returns its last state. */
export async function waitFor(
  call: Call,
  url: string,
  until: (body: Record<string, unknown>) => boolean = (b) => TERMINAL.has(String(b.status)),
  timeoutMs = HANG_MS,
): Promise<Record<string, unknown> & { status: string }> {
  let last: Record<string, unknown> = {};
  await waitUntil(
    async () => {
      const res = await call({ method: 'GET', url });
      assert.equal(res.statusCode, 200, res.body);
      last = res.json();
      return until(last);
    },
    // Each read is a request: a longer pause between them than the default.
    {
      what: `${url} to reach the expected state`,
      timeoutMs,
      pauseMs: 50,
      detail: () => JSON.stringify(last),
    },
  );
  return last as Record<string, unknown> & { status: string };
}
