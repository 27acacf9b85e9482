// API keys (docs/api.md, "API keys").
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParam } from '../../api/input.js';
import { ApiKey, ApiKeyList, CreateApiKeyBody, CreatedApiKey, UpdateApiKeyBody } from '../../api/keys.js';
import { parseRfc3339 } from '../../clock.js';
import type { ApiKeys } from '../../domain/api-keys.js';
import { auditOf } from '../audit.js';
import { principalOf } from '../auth.js';
import { errors, NoContent } from '../schemas.js';

export const tokenRoutes =
  (apiKeys: ApiKeys): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/tokens',
      {
        config: { scope: 'admin', rateLimit: 'tokens' },
        schema: {
          summary: 'Create an API key',
          tags: ['api keys'],
          body: CreateApiKeyBody,
          response: { 201: CreatedApiKey, ...errors(400, 401, 403, 404) },
        },
      },
      async (request, reply) => {
        const { name, expires_at: expiresAt, scopes, locations } = request.body;
        const caller = principalOf(request);
        const created = await apiKeys.create(
          caller.workspaceId,
          {
            name,
            ...(expiresAt === undefined ? {} : { expiresAt: parseRfc3339(expiresAt, 'expires_at') }),
            ...(scopes === undefined ? {} : { scopes }),
            ...(locations === undefined ? {} : { locations }),
          },
          caller,
          auditOf(request),
        );
        return reply.code(201).send(created);
      },
    );

    app.get(
      '/v1/tokens',
      {
        config: { scope: 'admin' },
        schema: {
          summary: 'List API keys',
          tags: ['api keys'],
          response: { 200: ApiKeyList, ...errors(401) },
        },
      },
      async (request) => apiKeys.list(principalOf(request)),
    );

    app.get(
      '/v1/key',
      {
        // Any key may read itself: the console and the CLI learn from it what they may offer.
        config: { scope: 'any' },
        schema: {
          summary: 'The API key of this request: its name and scopes',
          tags: ['api keys'],
          response: { 200: ApiKey, ...errors(401) },
        },
      },
      async (request) => {
        const caller = principalOf(request);
        return apiKeys.get(caller, caller.keyId);
      },
    );

    app.patch(
      '/v1/tokens/:id',
      {
        config: { scope: 'admin', rateLimit: 'tokens' },
        schema: {
          summary: 'Rename an API key or change its expiry',
          tags: ['api keys'],
          params: IdParam,
          body: UpdateApiKeyBody,
          response: { 204: NoContent, ...errors(400, 401, 404) },
        },
      },
      async (request, reply) => {
        const { name, expires_at: expiresAt } = request.body;
        await apiKeys.update(
          principalOf(request),
          request.params.id,
          {
            ...(name === undefined ? {} : { name }),
            ...(expiresAt === undefined ? {} : { expiresAt: parseRfc3339(expiresAt, 'expires_at') }),
          },
          auditOf(request),
        );
        return reply.code(204).send();
      },
    );

    app.delete(
      '/v1/tokens/:id',
      {
        config: { scope: 'admin', rateLimit: 'tokens' },
        schema: {
          summary: 'Revoke an API key',
          tags: ['api keys'],
          params: IdParam,
          response: { 204: NoContent, ...errors(401, 404) },
        },
      },
      async (request, reply) => {
        await apiKeys.revoke(principalOf(request), request.params.id, auditOf(request));
        return reply.code(204).send();
      },
    );
  };
