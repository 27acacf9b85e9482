// Buckets and containers made on request (docs/api.md, "Buckets"): POST /v1/buckets. The location's
// store says whether it has buckets and what names its provider takes (its createBucket capability);
// everything that can be checked without the provider is checked first, in the order of the API's
// other writes: the location (404, 409 ambiguous), a folder store (400), the name (400), the
// location's state (409, as for copy); then one provider call.

import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { invalid } from '../errors.js';
import { bucketWord } from '../providers.js';
import type { Entry } from '../stores/contract.js';
import { type AuditContext, record } from './audit/audit.js';
import type { Caller } from './caller.js';
import type { LocationRef } from './locations/addressing.js';
import type { Locations } from './locations/locations.js';
import { checkUsable } from './locations/usable.js';
import type { Storage } from './storage.js';

export class Buckets {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly locations: Locations,
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  async create(
    caller: Caller,
    request: { ref: LocationRef; bucket: string },
    audit: AuditContext,
  ): Promise<Entry> {
    const row = await this.locations.resolve(caller, request.ref);
    const entry = await this.storage.use(row, async (store) => {
      const creation = store.features.createBucket;
      if (!creation) {
        throw invalid(
          `location ${row.label} is a ${row.provider} location, which has folders, not buckets: a folder is created by writing a file into it (copy, move or pull to "folder/name")`,
        );
      }
      creation.checkName(request.bucket);
      checkUsable(row, this.clock.now(), `new ${bucketWord(row.provider)}s`);
      return creation.create(request.bucket);
    });
    // The change is the provider's: recorded once it is made, in a transaction with nothing else.
    const target = `${row.label}/${request.bucket}`;
    await this.db
      .transaction()
      .execute((trx) =>
        record(trx, audit, { action: 'bucket.create', target, status: 201 }, this.clock.now()),
      );
    return entry;
  }
}
