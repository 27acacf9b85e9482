// GET /v1/providers (docs/api.md, "Providers"): each provider's declaration, from the stores.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ProviderList, providerList } from '../../api/providers.js';
import { errors } from '../schemas.js';

export const providerRoutes = (): FastifyPluginAsyncTypebox => async (app) => {
  // The declarations are fixed for the process's life: built once.
  const list = providerList();
  app.get(
    '/v1/providers',
    {
      config: { scope: 'read' },
      schema: {
        summary: 'List the storage providers: their secret and metadata fields, hash kinds and features',
        tags: ['locations'],
        response: { 200: ProviderList, ...errors(401) },
      },
    },
    async () => list,
  );
};
