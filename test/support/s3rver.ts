// s3rver started in-process for tests: path-style buckets on 127.0.0.1, an ephemeral port, a fresh
// directory, and an account table that accepts any access key except REJECTED_ACCESS_KEY_ID (which it
// answers with InvalidAccessKeyId, as S3 does for a key it does not know).
//
// Stock s3rver knows only the key S3RVER: its authentication middleware looks every request's key up
// in the static map AWSAccount.registry (lib/models/account.js) and never checks V4 signatures. We
// swap that map for one that resolves every key but the rejected one to s3rver's dummy account.
//
// One more difference from S3 is patched at the door: s3rver reads x-amz-copy-source with decodeURI,
// which leaves %2B, %23, %3F, %26, %3D (and the other reserved escapes) undecoded, while S3 decodes
// the whole value (and requires "+" as %2B, aws-sdk-js#1821). The request hook re-encodes the header
// so that decodeURI yields what S3 would, and copies of keys with those characters behave as on S3.
// s3rver keeps a multipart upload's parts in a directory of their own but has no ListParts and no
// AbortMultipartUpload (both answer 405), and takes UploadPart for an upload it never began (or that
// was completed or aborted) as a new one. multipartLayer() answers those three as S3 does, from that
// directory: ListParts (every part, one page), AbortMultipartUpload (204, the parts removed) and
// NoSuchUpload (404) for any call on an upload that is not there.
// s3rver answers a PUT (and an UploadPart) when the last byte has passed its MD5 counter, before its
// file stream has written that byte: a HEAD right after can stat a shorter file (CI saw a 1-byte
// object as 0 bytes, and ferry's write check rightly removed it). durableWrites() makes both wait
// for the file, as S3 answers only once the object is stored.
// Two more things S3 does that s3rver does not, so that a damaged body is caught as S3 would catch it
// (docs/api.md, "Verification"): a PUT or UploadPart whose Content-MD5 is not the MD5 of the body
// that arrived is refused with 400 BadDigest and nothing stored, and an object completed from parts
// has S3's multipart ETag (the MD5 of the parts' MD5s, a hyphen, the number of parts) rather than
// the MD5 of its bytes.
// Run under `node --openssl-legacy-provider` (docs/testing.md): s3rver's listing continuation
// tokens use DES.
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export const REJECTED_ACCESS_KEY_ID = 'FERRY-REJECTED-KEY';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  callback(): Handler;
  httpServer?: Server;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;
interface AWSAccountModule {
  registry: Map<string, unknown>;
  DUMMY_ACCOUNT: { accessKeys: Map<string, string> };
}

const require = createRequire(import.meta.url);
const S3rver = require('s3rver') as S3rverClass;
const AWSAccount = require('s3rver/lib/models/account.js') as AWSAccountModule;
const S3Error = require('s3rver/lib/models/error.js') as new (code: string, message: string) => Error;
interface StoredObject {
  bucket: string;
  key: string;
  content: NodeJS.ReadableStream | Buffer;
  metadata: unknown;
}
interface FilesystemStoreInstance {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: unknown, md5: string): Promise<void>;
  putObject(object: StoredObject): Promise<{ size: number; md5: string }>;
  putPart(
    bucket: string,
    uploadId: string,
    partNumber: number,
    content: NodeJS.ReadableStream,
  ): Promise<{ size: number; md5: string }>;
  putObjectMultipart(
    bucket: string,
    uploadId: string,
    parts: Array<{ number: number }>,
  ): Promise<{ size: number; md5: string }>;
}
const FilesystemStore = require('s3rver/lib/stores/filesystem.js') as {
  new (root: string): FilesystemStoreInstance;
  prototype: FilesystemStoreInstance;
};

/** Writes content to file and answers its size and MD5 once the file holds every byte. */
async function writeCounted(
  content: NodeJS.ReadableStream | Buffer,
  file: string,
): Promise<{ size: number; md5: string }> {
  await mkdir(dirname(file), { recursive: true });
  const md5 = createHash('md5');
  if (Buffer.isBuffer(content)) {
    await writeFile(file, content);
    return { size: content.length, md5: md5.update(content).digest('hex') };
  }
  let size = 0;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      md5.update(chunk);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  await pipeline(content, count, createWriteStream(file));
  return { size, md5: md5.digest('hex') };
}

/** BadDigest, as S3 answers, when the request's Content-MD5 is not the MD5 of the body written. */
async function checkDigest(
  content: NodeJS.ReadableStream | Buffer,
  written: { md5: string },
  file: string,
): Promise<void> {
  const declared = (content as Partial<IncomingMessage>).headers?.['content-md5'];
  if (typeof declared !== 'string') return;
  if (Buffer.from(declared, 'base64').toString('hex') === written.md5) return;
  await rm(file, { force: true });
  throw new S3Error('BadDigest', 'The Content-MD5 you specified did not match what we received.');
}

/**
 * s3rver's putObject and putPart, answering only once the file is written and checking Content-MD5,
 * and its multipart completion giving S3's multipart ETag (see the header).
 */
function durableWrites(): void {
  const completeParts = FilesystemStore.prototype.putObjectMultipart;
  FilesystemStore.prototype.putObject = async function putObject(object) {
    const file = this.getResourcePath(object.bucket, object.key, 'object');
    const written = await writeCounted(object.content, file);
    await checkDigest(object.content, written, file);
    await this.putMetadata(object.bucket, object.key, object.metadata, written.md5);
    return written;
  };
  FilesystemStore.prototype.putPart = async function putPart(bucket, uploadId, partNumber, content) {
    const file = join(this.getResourcePath(bucket, undefined, 'uploads'), uploadId, String(partNumber));
    const written = await writeCounted(content, file);
    await checkDigest(content, written, file);
    await writeFile(`${file}.md5`, written.md5);
    return written;
  };
  FilesystemStore.prototype.putObjectMultipart = async function putObjectMultipart(bucket, uploadId, parts) {
    const dir = join(this.getResourcePath(bucket, undefined, 'uploads'), uploadId);
    const md5s = [...parts]
      .sort((a, b) => a.number - b.number)
      .map((part) => Buffer.from(readFileSync(join(dir, `${part.number}.md5`), 'utf8'), 'hex'));
    const key = readFileSync(join(dir, 'key'), 'utf8');
    const stored = await completeParts.call(this, bucket, uploadId, parts);
    const md5 = `${createHash('md5').update(Buffer.concat(md5s)).digest('hex')}-${md5s.length}`;
    await writeFile(this.getResourcePath(bucket, key, 'object.md5'), md5);
    return { size: stored.size, md5 };
  };
}
durableWrites();

function xml(res: ServerResponse, status: number, body: string): void {
  const payload = Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`);
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': String(payload.length) });
  res.end(payload);
}

/** Answers the multipart calls s3rver lacks (see the header); false for everything it answers itself. */
function multipartLayer(directory: string, req: IncomingMessage, res: ServerResponse): boolean {
  const url = new URL(req.url ?? '/', 'http://s3rver');
  const uploadId = url.searchParams.get('uploadId');
  if (uploadId === null) return false;
  const [, bucket = '', ...key] = url.pathname.split('/');
  const uploads = new FilesystemStore(directory).getResourcePath(
    decodeURIComponent(bucket),
    undefined,
    'uploads',
  );
  const dir = join(uploads, uploadId);
  if (!/^[0-9a-f]+$/.test(uploadId) || !existsSync(dir)) {
    req.resume();
    req.on('end', () =>
      xml(
        res,
        404,
        `<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message><UploadId>${uploadId}</UploadId></Error>`,
      ),
    );
    return true;
  }
  if (req.method === 'DELETE') {
    rmSync(dir, { recursive: true, force: true });
    res.writeHead(204);
    res.end();
    return true;
  }
  if (req.method === 'GET') {
    const parts = readdirSync(dir)
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .sort((a, b) => a - b)
      .map((n) => {
        const file = join(dir, String(n));
        const etag = existsSync(`${file}.md5`) ? readFileSync(`${file}.md5`, 'utf8') : '';
        const { size, mtime } = statSync(file);
        return `<Part><PartNumber>${n}</PartNumber><LastModified>${mtime.toISOString()}</LastModified><ETag>"${etag}"</ETag><Size>${size}</Size></Part>`;
      });
    xml(
      res,
      200,
      `<ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${bucket}</Bucket><Key>${key.join('/')}</Key><UploadId>${uploadId}</UploadId><PartNumberMarker>0</PartNumberMarker><MaxParts>10000</MaxParts><IsTruncated>false</IsTruncated>${parts.join('')}</ListPartsResult>`,
    );
    return true;
  }
  return false;
}

class AnyKeyRegistry extends Map<string, unknown> {
  override get(accessKeyId: string): unknown {
    if (accessKeyId === REJECTED_ACCESS_KEY_ID) return undefined;
    // The account's key table is read for V2 signatures only; keep it answering too.
    AWSAccount.DUMMY_ACCOUNT.accessKeys.set(accessKeyId, accessKeyId);
    return AWSAccount.DUMMY_ACCOUNT;
  }
  override has(accessKeyId: string): boolean {
    return accessKeyId !== REJECTED_ACCESS_KEY_ID;
  }
}

if (!(AWSAccount.registry instanceof AnyKeyRegistry)) AWSAccount.registry = new AnyKeyRegistry();

export interface S3rverHandle {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  port: number;
  close(): Promise<void>;
}

export async function startS3rver(): Promise<S3rverHandle> {
  const directory = await mkdtemp(join(tmpdir(), 'ferry-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    vhostBuckets: false,
    resetOnClose: false,
  });
  const handler = server.callback.bind(server);
  server.callback = () => {
    const inner = handler();
    return (req, res) => {
      if (multipartLayer(directory, req, res)) return;
      const source = req.headers['x-amz-copy-source'];
      if (typeof source === 'string') {
        try {
          req.headers['x-amz-copy-source'] = encodeURI(decodeURIComponent(source));
        } catch {
          // Malformed escapes: leave the header for s3rver to reject.
        }
      }
      inner(req, res);
    };
  };
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    async close() {
      server.httpServer?.closeAllConnections();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
