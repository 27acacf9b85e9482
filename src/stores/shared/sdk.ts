// The SDKs of the bucket stores (AWS's for the S3 family, Azure's, Google's), each loaded when a store
// of its provider first needs it rather than when ferry starts: loaded at start they were about 40 MiB
// of an idle server's memory (17, 13 and 10 MiB) and most of its start-up time, whatever providers its
// locations use. `ferry serve` loads those of its locations' providers right after it starts listening
// (preloadSdks), so the first request to such a location does not wait for one.
//
// They are loaded with require (node:module's createRequire), which is synchronous: a store opens
// synchronously (it checks its settings there) and builds its client there. The AWS SDK is CommonJS
// only, so an `import` of it elsewhere (the tests) shares this copy; Azure's and Google's packages
// have a CommonJS build beside their ES modules, and this takes that one.
import { createRequire } from 'node:module';
import type * as S3 from '@aws-sdk/client-s3';
import type * as AzureBlob from '@azure/storage-blob';
import type * as GoogleStorage from '@google-cloud/storage';
import { isS3Family, type Provider } from '../../providers.js';

const require = createRequire(import.meta.url);

// The AWS SDK warns once per process, on a Node older than 22, that its releases published after the
// first week of January 2027 will need Node 22 (aws-sdk-js-v3 issue 7983). ferry pins its release
// (package.json), which supports Node 20 (its engines: node >= 20), and runs on Node 20.18 or newer
// (README); a `ferry serve` on Node 20 logged that notice at every start. It is acknowledged the way
// the SDK documents, before any client is built, unless the operator set the variable themselves. A
// move to an SDK release that needs Node 22 has to raise the README's Node first (test/packages.test.ts).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

function onFirstUse<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(name) as T;
    return loaded;
  };
}

/** @aws-sdk/client-s3: the S3 family (s3, r2, wasabi, b2). */
export const awsS3 = onFirstUse<typeof S3>('@aws-sdk/client-s3');
/** @azure/storage-blob: azureblob. */
export const azureBlob = onFirstUse<typeof AzureBlob>('@azure/storage-blob');
/** @google-cloud/storage: gcs. */
export const googleStorage = onFirstUse<typeof GoogleStorage>('@google-cloud/storage');

/** Loads the SDK each of `providers` uses (the folder stores use none). */
export function preloadSdks(providers: Iterable<Provider>): void {
  for (const provider of providers) {
    if (isS3Family(provider)) awsS3();
    else if (provider === 'azureblob') azureBlob();
    else if (provider === 'gcs') googleStorage();
  }
}
