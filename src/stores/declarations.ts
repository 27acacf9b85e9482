// Every provider's declaration (src/stores/declaration.ts), as each store folder declares it, in the
// order ferry lists providers. Adding a provider adds its store's declarations here; src/providers.ts
// derives the provider list and its types from this object. Plain data: no store is loaded.
import * as azureblob from './azureblob/declaration.js';
import * as box from './box/declaration.js';
import type { ProviderDeclaration } from './declaration.js';
import * as drive from './drive/declaration.js';
import * as dropbox from './dropbox/declaration.js';
import * as gcs from './gcs/declaration.js';
import * as onedrive from './onedrive/declaration.js';
import * as s3 from './s3/declaration.js';

export const DECLARATIONS = {
  ...s3.declarations,
  ...gcs.declarations,
  ...azureblob.declarations,
  ...dropbox.declarations,
  ...drive.declarations,
  ...onedrive.declarations,
  ...box.declarations,
} satisfies Record<string, ProviderDeclaration>;

/** The providers of the S3 family: those the s3 store opens. */
export const S3_FAMILY_DECLARATIONS = s3.declarations;
