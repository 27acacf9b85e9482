// Creating buckets on Google Cloud Storage (docs/api.md, "Buckets"): the naming rules, checked before
// any request, then buckets.insert in the location's project (metadata project_id, else the key's).
// A name in use answers 409, whose message says whose the bucket is ("you already own it", or "not
// available": another project's).
// https://cloud.google.com/storage/docs/buckets#naming
// https://cloud.google.com/storage/docs/json_api/v1/buckets/insert
import type { Storage } from '@google-cloud/storage';
import { invalid } from '../../errors.js';
import type { BucketCreation, CallOptions, Entry } from '../contract.js';
import { COMMON_RULES, checkBucketName, type NameRule } from '../shared/bucket-names.js';
import { toFerryError } from './errors.js';

const RULES: NameRule[] = [
  {
    rule: 'are 3 to 63 characters long (up to 222 with dots, each dot-separated part at most 63)',
    test: (n) =>
      n.length >= 3 &&
      (n.includes('.') ? n.length <= 222 && n.split('.').every((p) => p.length <= 63) : n.length <= 63),
  },
  {
    rule: 'hold only lower-case letters, digits, hyphens, underscores and dots',
    test: (n) => /^[a-z0-9._-]*$/.test(n),
  },
  COMMON_RULES.endsAlphanumeric,
  COMMON_RULES.notIpAddress,
  { rule: 'do not begin with "goog"', test: (n) => !n.startsWith('goog') },
  {
    rule: 'do not contain "google" or a close misspelling of it (such as "g00gle")',
    test: (n) => !/g[o0][o0]g(l|1)e/.test(n),
  },
];

export function gcsBucketCreation(
  storage: () => Promise<Storage>,
  projectId: string | undefined,
): BucketCreation {
  const checkName = (name: string) => checkBucketName('gcs', 'bucket', name, RULES);
  return {
    checkName,
    async create(name: string, options: CallOptions = {}): Promise<Entry> {
      checkName(name);
      if (!projectId) {
        throw invalid(
          'gcs: creating a bucket needs a project: set metadata project_id or use a key with project_id',
        );
      }
      options.signal?.throwIfAborted();
      try {
        const [bucket] = await (await storage()).createBucket(name);
        const made = (bucket.metadata as { timeCreated?: string }).timeCreated;
        return { name, path: name, size: -1, isDir: true, modTime: made ? new Date(made) : new Date() };
      } catch (err) {
        throw toFerryError(err, `create bucket ${name}`, options.signal);
      }
    },
  };
}
