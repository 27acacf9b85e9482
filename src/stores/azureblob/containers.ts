// Creating containers on Azure Blob Storage (docs/api.md, "Buckets"): the naming rules, checked before
// any request, then Create Container. Containers belong to one storage account, so one that exists is
// always this account's.
// https://learn.microsoft.com/en-us/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata#container-names
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-container
import type { BlobServiceClient } from '@azure/storage-blob';
import type { BucketCreation, CallOptions, Entry } from '../contract.js';
import { COMMON_RULES, checkBucketName, type NameRule } from '../shared/bucket-names.js';
import { abortable } from './client.js';
import { toFerryError } from './errors.js';

const RULES: NameRule[] = [
  COMMON_RULES.length(3, 63),
  { rule: 'hold only lower-case letters, digits and hyphens', test: (n) => /^[a-z0-9-]*$/.test(n) },
  COMMON_RULES.endsAlphanumeric,
  { rule: 'have no two hyphens side by side', test: (n) => !n.includes('--') },
];

export function containerCreation(service: BlobServiceClient): BucketCreation {
  const checkName = (name: string) => checkBucketName('azureblob', 'container', name, RULES);
  return {
    checkName,
    async create(name: string, options: CallOptions = {}): Promise<Entry> {
      checkName(name);
      try {
        const made = await service.getContainerClient(name).create(abortable(options.signal));
        return { name, path: name, size: -1, isDir: true, modTime: made.lastModified ?? new Date() };
      } catch (err) {
        throw toFerryError(err, `create container ${name}`, options.signal);
      }
    },
  };
}
