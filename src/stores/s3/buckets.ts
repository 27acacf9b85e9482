// Creating buckets on the S3 family (docs/api.md, "Buckets"): each provider's naming rules, checked
// before any request, then HeadBucket and CreateBucket.
// - AWS answers 200 to a CreateBucket of a bucket the caller already owns in us-east-1 (a legacy
//   behaviour, CreateBucket "Errors"), and s3rver answers BucketAlreadyExists for any bucket, so a
//   HeadBucket first tells "it exists and these credentials reach it" honestly on every server. A
//   HeadBucket that fails otherwise (403 has no body to say why) leaves the answer to CreateBucket.
// - AWS needs the region as LocationConstraint outside us-east-1; R2, B2 and Wasabi take the region
//   from the endpoint, so they get none.
import type { CreateBucketCommandInput, S3Client } from '@aws-sdk/client-s3';
import { conflict } from '../../errors.js';
import type { S3FamilyProvider } from '../../providers.js';
import type { BucketCreation, CallOptions, Entry } from '../contract.js';
import { COMMON_RULES, checkBucketName, type NameRule } from '../shared/bucket-names.js';
import { awsS3 } from '../shared/sdk.js';
import { abortable, type S3Handle } from './client.js';
import { s3Error, statusOfError } from './errors.js';

const { length, endsAlphanumeric, notIpAddress } = COMMON_RULES;

/** https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html (general purpose buckets). */
const AWS_RULES: NameRule[] = [
  length(3, 63),
  { rule: 'hold only lower-case letters, digits, dots and hyphens', test: (n) => /^[a-z0-9.-]*$/.test(n) },
  endsAlphanumeric,
  { rule: 'have no two dots side by side', test: (n) => !n.includes('..') },
  notIpAddress,
  {
    rule: 'do not begin with "xn--", "sthree-" or "amzn-s3-demo-"',
    test: (n) => !/^(xn--|sthree-|amzn-s3-demo-)/.test(n),
  },
  {
    rule: 'do not end with "-s3alias", "--ol-s3", ".mrap", "--x-s3" or "--table-s3"',
    test: (n) => !/(-s3alias|--ol-s3|\.mrap|--x-s3|--table-s3)$/.test(n),
  },
];

/** https://developers.cloudflare.com/r2/buckets/create-buckets/ (bucket-level operations). */
const R2_RULES: NameRule[] = [
  length(3, 63),
  { rule: 'hold only lower-case letters, digits and hyphens', test: (n) => /^[a-z0-9-]*$/.test(n) },
  endsAlphanumeric,
];

/** https://www.backblaze.com/docs/cloud-storage-buckets (bucket names). */
const B2_RULES: NameRule[] = [
  length(6, 63),
  { rule: 'hold only letters, digits and hyphens', test: (n) => /^[A-Za-z0-9-]*$/.test(n) },
  { rule: 'do not begin with "b2-" (reserved)', test: (n) => !/^b2-/i.test(n) },
];

/** Wasabi follows Amazon's rules (docs.wasabi.com, "Creating a Bucket"). */
const RULES: Record<S3FamilyProvider, NameRule[]> = {
  s3: AWS_RULES,
  r2: R2_RULES,
  b2: B2_RULES,
  wasabi: AWS_RULES,
};

export function s3BucketCreation(provider: S3FamilyProvider, handle: S3Handle): BucketCreation {
  const { CreateBucketCommand } = awsS3();
  const checkName = (name: string) => checkBucketName(provider, 'bucket', name, RULES[provider]);
  return {
    checkName,
    async create(name: string, options: CallOptions = {}): Promise<Entry> {
      checkName(name);
      const what = `create bucket ${name}`;
      if (await reachable(handle.client, name, options.signal)) {
        throw conflict(`${provider}: bucket "${name}" already exists, and this location can open it`);
      }
      const { region, endpoint } = handle.connection;
      const input: CreateBucketCommandInput = { Bucket: name };
      if (provider === 's3' && region !== 'us-east-1' && endpoint === undefined) {
        input.CreateBucketConfiguration = { LocationConstraint: region as never };
      }
      try {
        await handle.client.send(new CreateBucketCommand(input), abortable(options.signal));
      } catch (err) {
        throw s3Error(err, what);
      }
      return { name, path: name, size: -1, isDir: true, modTime: new Date() };
    },
  };
}

/** HeadBucket: true when the bucket answers; false when it does not exist or the answer says nothing. */
async function reachable(client: S3Client, name: string, signal?: AbortSignal): Promise<boolean> {
  const { HeadBucketCommand } = awsS3();
  try {
    await client.send(new HeadBucketCommand({ Bucket: name }), abortable(signal));
    return true;
  } catch (err) {
    // 404: no such bucket. 403 and others: CreateBucket's answer, which has a body, will say why.
    if (statusOfError(err) !== undefined) return false;
    throw s3Error(err, `create bucket ${name}`);
  }
}
