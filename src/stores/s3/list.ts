// Listing for the S3 family (docs/api.md, "Listing objects"), one page in memory at a time.
// - "" lists the buckets (size -1).
// - "bucket[/prefix]" lists with ListObjectsV2: Delimiter "/" for immediate children (common prefixes
//   become folders of size 0), no delimiter for a recursive listing, where every prefix between the
//   listed folder and an object is yielded once as a folder (shared/folders.ts).
// - A zero-byte "prefix/" marker object (what consoles create for an empty folder) makes the folder
//   exist; it is never listed as a file.
// - A missing bucket is NoSuchBucket from ListObjectsV2 itself; a non-empty prefix with nothing under
//   it is not_found.
import type { S3Client } from '@aws-sdk/client-s3';
import { FerryError } from '../../errors.js';
import type { Entry, ListOptions } from '../../stores/contract.js';
import { FolderChain, folderEntry } from '../shared/folders.js';
import { pages } from '../shared/paging.js';
import { baseName } from '../shared/paths.js';
import { awsS3 } from '../shared/sdk.js';
import { abortable } from './client.js';
import { s3Error } from './errors.js';
import { splitPath } from './paths.js';

async function* listBuckets(client: S3Client, options: ListOptions): AsyncGenerator<Entry> {
  const { ListBucketsCommand } = awsS3();
  const listed = pages(
    (token) =>
      client
        .send(new ListBucketsCommand(token ? { ContinuationToken: token } : {}), abortable(options.signal))
        .catch((err: unknown) => {
          throw s3Error(err, 'list buckets');
        }),
    (page) => page.ContinuationToken,
  );
  for await (const page of listed) {
    for (const bucket of page.Buckets ?? []) {
      if (!bucket.Name) continue;
      const entry: Entry = { name: bucket.Name, path: bucket.Name, size: -1, isDir: true };
      if (bucket.CreationDate) entry.modTime = bucket.CreationDate;
      yield entry;
    }
  }
}

export interface ListTuning {
  /** MaxKeys per ListObjectsV2 page; undefined: the server's default (1,000 on S3). */
  pageSize: number | undefined;
}

export async function* listS3(
  client: S3Client,
  path: string,
  options: ListOptions,
  tuning: ListTuning,
): AsyncGenerator<Entry> {
  const { ListObjectsV2Command } = awsS3();
  if (path === '') {
    yield* listBuckets(client, options);
    return;
  }
  const { bucket, key } = splitPath(path, { allowBucket: true });
  const prefix = key === '' ? '' : `${key}/`;
  const recursive = options.recursive === true;
  const root = key === '' ? bucket : `${bucket}/${key}`;
  const what = `list ${path}`;

  let found = false;
  const chain = new FolderChain();
  const listed = pages(
    (token) =>
      client
        .send(
          new ListObjectsV2Command({
            Bucket: bucket,
            Prefix: prefix,
            ...(recursive ? {} : { Delimiter: '/' }),
            ...(token ? { ContinuationToken: token } : {}),
            ...(tuning.pageSize ? { MaxKeys: tuning.pageSize } : {}),
          }),
          abortable(options.signal),
        )
        .catch((err: unknown) => {
          throw s3Error(err, what);
        }),
    (page) => (page.IsTruncated ? page.NextContinuationToken : undefined),
  );

  for await (const page of listed) {
    const entries: { sortKey: string; entry: Entry }[] = [];
    for (const common of page.CommonPrefixes ?? []) {
      const rel = common.Prefix?.slice(prefix.length, -1);
      found = true;
      // A key with an empty segment ("a//b") would give a folder with an empty name; it has no path.
      if (!rel) continue;
      entries.push({ sortKey: common.Prefix as string, entry: folderEntry(`${root}/${rel}`) });
    }
    for (const object of page.Contents ?? []) {
      if (object.Key === undefined) continue;
      found = true;
      const rel = object.Key.slice(prefix.length);
      if (rel === '') continue; // the folder's own marker
      if (recursive) {
        const { folders } = chain.next(rel);
        for (const f of folders)
          entries.push({ sortKey: `${prefix}${f}/`, entry: folderEntry(`${root}/${f}`) });
      }
      // A "folder/" marker or a key with an empty segment is not a file.
      if (rel.endsWith('/') || rel.split('/').includes('')) continue;
      const entry: Entry = {
        name: baseName(rel),
        path: `${root}/${rel}`,
        size: object.Size ?? 0,
        isDir: false,
      };
      if (object.LastModified) entry.modTime = object.LastModified;
      if (object.ETag) entry.etag = object.ETag;
      // A single-part upload's ETag is the MD5 of its bytes; a multipart one ("…-N") is not.
      const md5 = object.ETag ? /^"?([0-9a-f]{32})"?$/i.exec(object.ETag)?.[1] : undefined;
      if (md5 !== undefined) entry.hashes = { md5: md5.toLowerCase() };
      entries.push({ sortKey: object.Key, entry });
    }
    if (!recursive) entries.sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
    for (const { entry } of entries) yield entry;
  }

  if (!found && prefix !== '') {
    throw new FerryError('not_found', `${what}: no such folder`);
  }
}
