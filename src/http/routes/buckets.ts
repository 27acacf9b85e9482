// POST /v1/buckets (docs/api.md, "Buckets"): a new bucket or container on a bucket store.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BucketBody, Entry } from '../../api/listing.js';
import type { Buckets } from '../../domain/buckets.js';
import { auditOf } from '../audit.js';
import { principalOf } from '../auth.js';
import { errors } from '../schemas.js';

export const bucketRoutes =
  (buckets: Buckets): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/buckets',
      {
        config: { scope: 'admin', rateLimit: 'locations' },
        schema: {
          summary: 'Create a bucket (a container on azureblob) on a bucket store',
          tags: ['buckets'],
          body: BucketBody,
          response: { 201: Entry, ...errors(400, 401, 403, 404, 409, 502, 503) },
        },
      },
      async (request, reply) => {
        const { bucket, ...ref } = request.body;
        const entry = await buckets.create(principalOf(request), { ref, bucket }, auditOf(request));
        return reply.code(201).send({
          name: entry.name,
          path: entry.path,
          size: entry.size,
          isDir: entry.isDir,
          ...(entry.modTime === undefined ? {} : { modTime: entry.modTime.toISOString() }),
        });
      },
    );
  };
