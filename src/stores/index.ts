// The registry: which store implements each provider, and which checks the metadata keys it reads.
// The S3 family shares one implementation.
import type { Provider } from '../providers.js';
import * as azureblob from './azureblob/index.js';
import * as box from './box/index.js';
import type { StoreContext, StoreLocation } from './context.js';
import type { Store } from './contract.js';
import * as drive from './drive/index.js';
import * as dropbox from './dropbox/index.js';
import * as gcs from './gcs/index.js';
import * as onedrive from './onedrive/index.js';
import * as s3 from './s3/index.js';

type Opener = (location: StoreLocation, ctx: StoreContext) => Store;

const OPENERS: Record<Provider, Opener> = {
  s3: s3.open,
  r2: s3.open,
  wasabi: s3.open,
  b2: s3.open,
  gcs: gcs.open,
  azureblob: azureblob.open,
  dropbox: dropbox.open,
  drive: drive.open,
  onedrive: onedrive.open,
  box: box.open,
};

export function openStore(location: StoreLocation, ctx: StoreContext): Store {
  return OPENERS[location.provider](location, ctx);
}

type MetadataCheck = (metadata: Record<string, unknown>) => void;

/** Providers whose store reads metadata keys; the others take any metadata as it is. */
const METADATA_CHECKS: Partial<Record<Provider, MetadataCheck>> = {
  s3: s3.checkMetadata,
  r2: s3.checkMetadata,
  wasabi: s3.checkMetadata,
  b2: s3.checkMetadata,
  gcs: gcs.checkMetadata,
  azureblob: azureblob.checkMetadata,
};

/** Throws invalid when a metadata key the provider's store reads has the wrong type or form. */
export function checkStoreMetadata(provider: Provider, metadata: Record<string, unknown>): void {
  METADATA_CHECKS[provider]?.(metadata);
}
