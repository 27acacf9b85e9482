// POST /v1/list (docs/api.md, "Listing objects"). The answer is streamed: entries are written as the provider
// returns its pages. A failure before the first entry answers with the usual error; a failure after the
// answer has started cuts the connection, so a client never mistakes a partial list for a whole one.
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ListBody, Listing } from '../../api/listing.js';
import { type Listing as DomainListing, listObjects } from '../../domain/listing.js';
import type { Locations } from '../../domain/locations/locations.js';
import type { Storage } from '../../domain/storage.js';
import type { Entry } from '../../stores/contract.js';
import { principalOf } from '../auth.js';
import { errors } from '../schemas.js';

const CHUNK_BYTES = 64 * 1024;

export function entryJson(entry: Entry): string {
  return JSON.stringify({
    name: entry.name,
    path: entry.path,
    size: entry.size,
    isDir: entry.isDir,
    ...(entry.mimeType === undefined ? {} : { mimeType: entry.mimeType }),
    ...(entry.modTime === undefined ? {} : { modTime: entry.modTime.toISOString() }),
  });
}

export async function* listingJson(listing: DomainListing): AsyncGenerator<string> {
  let chunk =
    listing.hint === undefined ? '{"entries":[' : `{"hint":${JSON.stringify(listing.hint)},"entries":[`;
  let first = true;
  for await (const entry of listing.entries) {
    chunk += (first ? '' : ',') + entryJson(entry);
    first = false;
    if (chunk.length >= CHUNK_BYTES) {
      yield chunk;
      chunk = '';
    }
  }
  yield `${chunk}]}`;
}

export const listRoutes =
  (locations: Locations, storage: Storage): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/list',
      {
        config: { scope: 'read', rateLimit: 'list' },
        schema: {
          summary: 'List the objects at a location',
          tags: ['listing'],
          body: ListBody,
          response: {
            200: Listing,
            ...errors(400, 401, 403, 404, 409, 502, 503),
          },
        },
      },
      async (request, reply) => {
        const { path, recurse, ...ref } = request.body;
        const listing = await listObjects(locations, storage, principalOf(request), {
          ref,
          ...(path === undefined ? {} : { path }),
          ...(recurse === undefined ? {} : { recurse }),
        });
        // The schema above describes the JSON; the body is that JSON, written as a stream.
        const body = Readable.from(listingJson(listing)) as unknown as Parameters<typeof reply.send>[0];
        return reply.type('application/json; charset=utf-8').send(body);
      },
    );
  };
