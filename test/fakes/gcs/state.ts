// The fake GCS's data: buckets, objects (bytes, generation, MD5 and CRC32C as the JSON API reports
// them), resumable upload sessions and rewrites in progress. Object resources follow
// https://cloud.google.com/storage/docs/json_api/v1/objects#resource ; bucket resources
// https://cloud.google.com/storage/docs/json_api/v1/buckets#resource
import { createHash, randomBytes } from 'node:crypto';
import { CRC32C } from '@google-cloud/storage';

export interface StoredObject {
  bucket: string;
  name: string;
  data: Buffer;
  generation: number;
  contentType: string;
  timeCreated: Date;
  updated: Date;
  md5Hash: string;
  crc32c: string;
}

export interface StoredBucket {
  name: string;
  project: string;
  timeCreated: Date;
  updated: Date;
}

export interface UploadSession {
  id: string;
  bucket: string;
  name: string;
  contentType: string;
  /** Bytes received so far (the session keeps them in order). */
  chunks: Buffer[];
  received: number;
}

export interface Rewrite {
  token: string;
  source: StoredObject;
  bucket: string;
  name: string;
  done: number;
}

/** Names sort by their UTF-8 bytes, as GCS lists them. */
export function compareNames(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

export function md5Of(data: Buffer): string {
  return createHash('md5').update(data).digest('base64');
}

export function crc32cOf(data: Buffer): string {
  const crc = new CRC32C();
  crc.update(data);
  return crc.toString();
}

export class GcsState {
  readonly buckets = new Map<string, StoredBucket>();
  readonly objects = new Map<string, Map<string, StoredObject>>();
  readonly uploads = new Map<string, UploadSession>();
  readonly rewrites = new Map<string, Rewrite>();
  #generation = Date.now() * 1000;

  createBucket(name: string, project: string): StoredBucket {
    const now = new Date();
    const bucket = { name, project, timeCreated: now, updated: now };
    this.buckets.set(name, bucket);
    this.objects.set(name, new Map());
    return bucket;
  }

  objectsOf(bucket: string): Map<string, StoredObject> | undefined {
    return this.objects.get(bucket);
  }

  put(bucket: string, name: string, data: Buffer, contentType: string): StoredObject {
    const now = new Date();
    const object: StoredObject = {
      bucket,
      name,
      data,
      generation: ++this.#generation,
      contentType,
      timeCreated: now,
      updated: now,
      md5Hash: md5Of(data),
      crc32c: crc32cOf(data),
    };
    this.objects.get(bucket)?.set(name, object);
    return object;
  }

  newUpload(bucket: string, name: string, contentType: string): UploadSession {
    const session = {
      id: randomBytes(16).toString('hex'),
      bucket,
      name,
      contentType,
      chunks: [],
      received: 0,
    };
    this.uploads.set(session.id, session);
    return session;
  }

  newRewrite(source: StoredObject, bucket: string, name: string): Rewrite {
    const rewrite = { token: randomBytes(16).toString('hex'), source, bucket, name, done: 0 };
    this.rewrites.set(rewrite.token, rewrite);
    return rewrite;
  }
}

/** The object resource as objects.get, list and uploads answer it. */
export function objectResource(o: StoredObject): Record<string, unknown> {
  const id = `${o.bucket}/${o.name}/${o.generation}`;
  return {
    kind: 'storage#object',
    id,
    selfLink: `https://www.googleapis.com/storage/v1/b/${o.bucket}/o/${encodeURIComponent(o.name)}`,
    name: o.name,
    bucket: o.bucket,
    generation: String(o.generation),
    metageneration: '1',
    contentType: o.contentType,
    timeCreated: o.timeCreated.toISOString(),
    updated: o.updated.toISOString(),
    storageClass: 'STANDARD',
    timeStorageClassUpdated: o.timeCreated.toISOString(),
    size: String(o.data.length),
    md5Hash: o.md5Hash,
    crc32c: o.crc32c,
    etag: Buffer.from(String(o.generation)).toString('base64'),
  };
}

export function bucketResource(b: StoredBucket): Record<string, unknown> {
  return {
    kind: 'storage#bucket',
    id: b.name,
    selfLink: `https://www.googleapis.com/storage/v1/b/${b.name}`,
    name: b.name,
    projectNumber: '123456789012',
    metageneration: '1',
    location: 'US',
    storageClass: 'STANDARD',
    etag: 'CAE=',
    timeCreated: b.timeCreated.toISOString(),
    updated: b.updated.toISOString(),
    locationType: 'multi-region',
  };
}
