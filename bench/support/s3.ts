// The AWS SDK client benches seed s3rver with, and a parallel seeder. Checksums are sent only when
// required (docs/testing.md: s3rver stores the SDK's default aws-chunked bodies verbatim).
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

export function seedClient(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'seed', secretAccessKey: 'seed' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  });
}

/**
 * Creates `bucket` (unless `exists`) and puts one object per key (body from `body(key)`), `concurrency`
 * at a time.
 */
export async function seedBucket(
  endpoint: string,
  bucket: string,
  keys: readonly string[],
  options: { concurrency?: number; body?: (key: string) => string; exists?: boolean } = {},
): Promise<void> {
  const client = seedClient(endpoint);
  const body = options.body ?? ((key: string) => key);
  try {
    if (options.exists !== true) await client.send(new CreateBucketCommand({ Bucket: bucket }));
    let next = 0;
    const worker = async () => {
      while (next < keys.length) {
        const key = keys[next++] as string;
        await client.send(
          new PutObjectCommand({ Bucket: bucket, Key: key, Body: body(key), ContentType: 'text/plain' }),
        );
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 32 }, worker));
  } finally {
    client.destroy();
  }
}
