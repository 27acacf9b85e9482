// Bucket (container) naming rules as data: each bucket store lists its provider's rules, and a name is
// checked against them before any request, so a refused name costs nothing and the message names the
// rule it breaks (docs/api.md, "Buckets"). The rules themselves live with each store (s3/buckets.ts,
// gcs/buckets.ts, azureblob/containers.ts), each citing its provider's page.
import { invalid } from '../../errors.js';

export interface NameRule {
  /** What the rule asks, completing "bucket names …": "are 3 to 63 characters long". */
  rule: string;
  /** True when the name keeps the rule. */
  test: (name: string) => boolean;
}

/** Four dot-separated decimal numbers: a name that reads as an IPv4 address. */
const IP_ADDRESS = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Rules several providers share. */
export const COMMON_RULES = {
  length: (min: number, max: number): NameRule => ({
    rule: `are ${min} to ${max} characters long`,
    test: (name) => name.length >= min && name.length <= max,
  }),
  endsAlphanumeric: {
    rule: 'begin and end with a lower-case letter or a digit',
    test: (name) => /^[a-z0-9]/.test(name) && /[a-z0-9]$/.test(name),
  } satisfies NameRule,
  notIpAddress: {
    rule: 'are not formatted as an IP address (such as 192.168.5.4)',
    test: (name) => !IP_ADDRESS.test(name),
  } satisfies NameRule,
};

/** Throws invalid naming the first rule `name` breaks; `store` starts the message ("s3", "gcs"). */
export function checkBucketName(
  store: string,
  kind: 'bucket' | 'container',
  name: string,
  rules: readonly NameRule[],
): void {
  for (const { rule, test } of rules) {
    if (!test(name)) throw invalid(`${store}: ${kind} name "${name}" is not allowed: ${kind} names ${rule}`);
  }
}
