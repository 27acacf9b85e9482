// Pull, move, remove and the remove preview (docs/api.md, "Move, remove, pull"). Like share and send
// they have no /v1 prefix.
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  MoveBody,
  MovePreview,
  MovePreviewBody,
  PullBody,
  Pulled,
  RemoveBody,
  RemovePreview,
  RemovePreviewBody,
} from '../../api/operations.js';
import { Plan } from '../../api/plans.js';
import { Queued } from '../../api/transfers.js';
import { PAGE_DEFAULT } from '../../db/paging.js';
import type { Plans } from '../../domain/plans/plans.js';
import { noBackupInPlans } from '../../domain/transfers/backup-to.js';
import type { Operations } from '../../domain/transfers/operations.js';
import { auditOf } from '../audit.js';
import { principalOf, readWhenDryRun } from '../auth.js';
import { errors } from '../schemas.js';
import { listingJson } from './list.js';

export const operationRoutes =
  (operations: Operations, queued: () => void, plans: Plans): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/pull',
      {
        config: { scope: 'transfer', rateLimit: 'transfer' },
        schema: {
          summary: 'Fetch files from http(s) URLs into a location',
          tags: ['transfers'],
          body: PullBody,
          response: {
            200: Pulled,
            ...errors(400, 401, 404, 409),
          },
        },
      },
      async (request) => {
        const result = await operations.pull(
          principalOf(request),
          request.body.from,
          request.body.to,
          auditOf(request),
        );
        queued();
        return result;
      },
    );

    app.post(
      '/move',
      {
        config: { scope: readWhenDryRun('transfer'), rateLimit: 'transfer' },
        schema: {
          summary: 'Move files; afterwards they exist only at the destination',
          tags: ['transfers'],
          body: MoveBody,
          response: { 200: Plan, 202: Queued, ...errors(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        if (request.body.dry_run === true && request.body.backup_to !== undefined) throw noBackupInPlans();
        if (request.body.dry_run === true)
          return reply
            .code(200)
            .send(await plans.move(principalOf(request), request.body, PAGE_DEFAULT, auditOf(request)));
        const result = await operations.move(
          principalOf(request),
          request.body.from,
          request.body.to,
          request.body.literal === true,
          request.body.filter,
          auditOf(request),
          request.body.backup_to,
        );
        queued();
        return reply.code(202).send(result);
      },
    );

    app.post(
      '/remove',
      {
        config: { scope: readWhenDryRun('remove'), rateLimit: 'transfer' },
        schema: {
          summary: 'Remove files (unrecoverable); a dry run first (dry_run: true), then run its plan',
          tags: ['transfers'],
          body: RemoveBody,
          response: { 200: Plan, 202: Queued, ...errors(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        if (request.body.dry_run === true && request.body.backup_to !== undefined) throw noBackupInPlans();
        if (request.body.dry_run === true)
          return reply
            .code(200)
            .send(await plans.remove(principalOf(request), request.body, PAGE_DEFAULT, auditOf(request)));
        const result = await operations.remove(
          principalOf(request),
          request.body.path,
          request.body.literal === true,
          request.body.filter,
          auditOf(request),
          request.body.backup_to,
        );
        queued();
        return reply.code(202).send(result);
      },
    );

    app.post(
      '/remove/preview',
      {
        config: { scope: 'read', rateLimit: 'preview' },
        schema: {
          summary: 'What /remove would remove, without removing anything',
          tags: ['transfers'],
          body: RemovePreviewBody,
          response: {
            200: RemovePreview,
            ...errors(400, 401, 404, 409, 502, 503),
          },
        },
      },
      async (request, reply) => {
        const entries = await operations.preview(
          principalOf(request),
          request.body.path,
          request.body.literal === true,
          request.body.filter,
        );
        const body = Readable.from(listingJson({ entries })) as unknown as Parameters<typeof reply.send>[0];
        return reply.type('application/json; charset=utf-8').send(body);
      },
    );

    app.post(
      '/move/preview',
      {
        config: { scope: 'read', rateLimit: 'preview' },
        schema: {
          summary: 'What /move would move and where, without moving anything',
          tags: ['transfers'],
          body: MovePreviewBody,
          response: {
            200: MovePreview,
            ...errors(400, 401, 404, 409, 502, 503),
          },
        },
      },
      async (request, reply) => {
        const moves = await operations.movePreview(
          principalOf(request),
          request.body.from,
          request.body.to,
          request.body.literal === true,
          request.body.filter,
        );
        const body = Readable.from(moveJson(moves)) as unknown as Parameters<typeof reply.send>[0];
        return reply.type('application/json; charset=utf-8').send(body);
      },
    );
  };

/** {entries: [{from, to}]} streamed in chunks, as listingJson streams a listing. */
async function* moveJson(moves: AsyncIterable<{ from: string; to: string }>): AsyncGenerator<string> {
  let chunk = '{"entries":[';
  let first = true;
  for await (const move of moves) {
    chunk += (first ? '' : ',') + JSON.stringify({ from: move.from, to: move.to });
    first = false;
    if (chunk.length >= 64 * 1024) {
      yield chunk;
      chunk = '';
    }
  }
  yield `${chunk}]}`;
}
