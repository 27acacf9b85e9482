// The bare SDK loop of bench/transfer, the server's limit for a tool that does no more than the
// requests themselves: list the source bucket, then 16 objects at a time,
//   s3-copy SRC DST:      one CopyObject each (the AWS SDK), as ferry and rclone copy server-side;
//   s3-to-azure SRC DST:  GetObject, then one Put Blob (objects up to 4 MiB, read whole) or the Azure
//                         SDK's uploadStream (4 MiB blocks, 8 at a time) for larger ones.
// No checks, no retries beyond the SDKs' own, no database: what is left is the servers' time.
// Plain JavaScript run by node itself. Environment: S3_ENDPOINT, AZURE_ENDPOINT, AZURE_ACCOUNT, AZURE_KEY.
//   node bench/transfer/sdk-loop.mjs s3-copy source dest-bucket
import { CopyObjectCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';

const [mode, source, destination] = process.argv.slice(2);
const CONCURRENCY = 16;
const MiB = 1024 * 1024;
const s3 = new S3Client({
  endpoint: process.env.S3_ENDPOINT,
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});

const objects = [];
for (let token; ; ) {
  const page = await s3.send(new ListObjectsV2Command({ Bucket: source, ContinuationToken: token }));
  for (const o of page.Contents ?? []) objects.push({ key: o.Key, size: o.Size });
  if (!page.IsTruncated) break;
  token = page.NextContinuationToken;
}

let copyOne;
if (mode === 's3-copy') {
  copyOne = ({ key }) =>
    s3.send(
      new CopyObjectCommand({
        Bucket: destination,
        Key: key,
        CopySource: `${source}/${encodeURIComponent(key)}`,
      }),
    );
} else if (mode === 's3-to-azure') {
  const azure = new BlobServiceClient(
    process.env.AZURE_ENDPOINT,
    new StorageSharedKeyCredential(process.env.AZURE_ACCOUNT, process.env.AZURE_KEY),
  ).getContainerClient(destination);
  copyOne = async ({ key, size }) => {
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: source, Key: key }));
    const blob = azure.getBlockBlobClient(key);
    if (size <= 4 * MiB) {
      const data = Buffer.from(await Body.transformToByteArray());
      await blob.upload(data, data.length);
    } else await blob.uploadStream(Body, 4 * MiB, 8);
  };
} else throw new Error(`unknown mode ${mode}`);

let next = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < objects.length) await copyOne(objects[next++]);
  }),
);
s3.destroy();
