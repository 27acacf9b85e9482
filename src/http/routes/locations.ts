// The eight location operations (docs/api.md, "Operations" under "Locations").

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CreateLocationBody,
  LocationList,
  LocationProjection,
  LocationRef,
  LocationStatusView,
  RenameLocationBody,
  ReplaceSecretBody,
} from '../../api/locations.js';
import type { Locations } from '../../domain/locations/locations.js';
import { auditOf } from '../audit.js';
import { principalOf, workspaceOf } from '../auth.js';
import { errors, NoContent } from '../schemas.js';

export const locationRoutes =
  (locations: Locations, refreshRequested: () => void): FastifyPluginAsyncTypebox =>
  async (app) => {
    const listBodies = new WeakMap<object, Buffer>();
    app.get(
      '/v1/locations',
      {
        // The cached list is chosen by the principal's locations_version, which only a confirmed key
        // carries (src/http/auth.ts).
        config: { scope: 'read', authFirst: true },
        schema: {
          summary: 'List locations',
          tags: ['locations'],
          response: { 200: LocationList, ...errors(401) },
        },
      },
      async (request, reply) => {
        const items = await locations.list(principalOf(request), request.principal?.locationsVersion);
        // Locations hands out the same array while the list is unchanged, so its bytes are kept with
        // it and an unchanged list is not serialized again (the route's own schema serializer).
        // The casts: serializeInput is typed for objects, and send for the schema's type, not its bytes.
        let body = listBodies.get(items);
        if (body === undefined) {
          body = Buffer.from(reply.serializeInput(items as never, '200') as string);
          listBodies.set(items, body);
        }
        return reply.type('application/json; charset=utf-8').send(body as never);
      },
    );

    app.post(
      '/v1/locations',
      {
        config: { scope: 'admin', rateLimit: 'locations', wholeWorkspace: true },
        schema: {
          summary: 'Create a location',
          tags: ['locations'],
          body: CreateLocationBody,
          response: { 201: LocationProjection, ...errors(400, 401, 422) },
        },
      },
      async (request, reply) => {
        const body: CreateLocationBody = request.body;
        const created = await locations.create(workspaceOf(request), body, auditOf(request));
        return reply.code(201).send(created);
      },
    );

    app.post(
      '/v1/locations/get',
      {
        config: { scope: 'read' },
        schema: {
          summary: 'Get a location',
          tags: ['locations'],
          body: LocationRef,
          response: { 200: LocationProjection, ...errors(400, 401, 404, 409) },
        },
      },
      async (request) => locations.get(principalOf(request), request.body),
    );

    app.put(
      '/v1/locations',
      {
        config: { scope: 'admin', rateLimit: 'locations' },
        schema: {
          summary: "Replace a location's secret",
          tags: ['locations'],
          body: ReplaceSecretBody,
          response: { 200: LocationProjection, ...errors(400, 401, 404, 409, 422) },
        },
      },
      async (request) => {
        const { secret, metadata, ...ref } = request.body;
        return locations.replaceSecret(
          principalOf(request),
          ref,
          { secret, ...(metadata === undefined ? {} : { metadata }) },
          auditOf(request),
        );
      },
    );

    app.patch(
      '/v1/locations',
      {
        config: { scope: 'admin', rateLimit: 'locations' },
        schema: {
          summary: "Update a location's label",
          tags: ['locations'],
          body: RenameLocationBody,
          response: { 200: LocationProjection, ...errors(400, 401, 404, 409) },
        },
      },
      async (request) => {
        const { label, ...ref } = request.body;
        return locations.updateLabel(principalOf(request), ref, label, auditOf(request));
      },
    );

    app.delete(
      '/v1/locations',
      {
        config: { scope: 'admin', rateLimit: 'locations' },
        schema: {
          summary: 'Delete a location',
          tags: ['locations'],
          body: LocationRef,
          response: { 204: NoContent, ...errors(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        await locations.delete(principalOf(request), request.body, auditOf(request));
        return reply.code(204).send();
      },
    );

    app.post(
      '/v1/locations/refresh',
      {
        config: { scope: 'admin', rateLimit: 'locations' },
        schema: {
          summary: 'Queue a credential refresh',
          tags: ['locations'],
          body: LocationRef,
          response: { 202: NoContent, ...errors(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        if (await locations.requestRefresh(principalOf(request), request.body, auditOf(request)))
          refreshRequested();
        return reply.code(202).send();
      },
    );

    app.post(
      '/v1/locations/status',
      {
        config: { scope: 'read' },
        schema: {
          summary: "Read a location's refresh status",
          tags: ['locations'],
          body: LocationRef,
          response: { 200: LocationStatusView, ...errors(400, 401, 404, 409) },
        },
      },
      async (request) => locations.status(principalOf(request), request.body),
    );
  };
