// Copy and sync (docs/api.md, "Copy" and "Sync"): a request accepted as a transfer or a job (202), or
// with dry_run its plan (200, docs/api.md "Plans"). Polling what was accepted is transfers.ts and jobs.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CopyBody, SyncBody } from '../../api/copy.js';
import { Plan } from '../../api/plans.js';
import { Accepted, Planning } from '../../api/transfers.js';
import { PAGE_DEFAULT } from '../../db/paging.js';
import type { Plans } from '../../domain/plans/plans.js';
import { noBackupInPlans } from '../../domain/transfers/backup-to.js';
import type { Copies } from '../../domain/transfers/copy.js';
import { auditOf } from '../audit.js';
import { deleting, principalOf, readWhenDryRun, syncDeletes } from '../auth.js';
import { errors } from '../schemas.js';

/** A copy body may be 8 MiB (a 100,000-key manifest; docs/api.md, "Copy"). */
export const COPY_BODY_LIMIT = 8 * 1024 * 1024;

export interface CopyRouteDeps {
  copies: Copies;
  /** Dry runs (docs/api.md, "Plans"). */
  plans: Plans;
  /** Tells a worker in this process that there is new work. */
  queued: () => void;
}

export const copyRoutes =
  (deps: CopyRouteDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { copies } = deps;

    app.post(
      '/v1/copy',
      {
        bodyLimit: COPY_BODY_LIMIT,
        config: { scope: readWhenDryRun('transfer') },
        schema: {
          summary: 'Copy an object, or every object under a prefix',
          tags: ['transfers'],
          body: CopyBody,
          response: {
            200: Plan,
            202: Accepted,
            ...errors(400, 401, 404, 409, 413, 429),
          },
        },
      },
      async (request, reply) => {
        const { dry_run, ...body }: CopyBody = request.body;
        if (dry_run === true && body.backup_to !== undefined) throw noBackupInPlans();
        if (dry_run === true)
          return reply
            .code(200)
            .send(await deps.plans.copy(principalOf(request), body, PAGE_DEFAULT, auditOf(request)));
        const accepted = await copies.accept(principalOf(request), body, undefined, auditOf(request));
        deps.queued();
        return reply.code(202).send(accepted);
      },
    );

    app.post(
      '/v1/sync',
      {
        // A dry run is a read; a sync that deletes needs `remove` as well as `transfer`.
        config: { scope: (request) => readWhenDryRun(deleting(syncDeletes(request.body)))(request) },
        schema: {
          summary:
            'Make a prefix hold what another holds: copy what is missing or different, optionally delete the rest',
          tags: ['transfers'],
          body: SyncBody,
          response: {
            200: Plan,
            202: Planning,
            ...errors(400, 401, 404, 409, 429),
          },
        },
      },
      async (request, reply) => {
        const { dry_run, ...body }: SyncBody = request.body;
        if (dry_run === true && body.backup_to !== undefined) throw noBackupInPlans();
        if (dry_run === true)
          return reply
            .code(200)
            .send(await deps.plans.sync(principalOf(request), body, PAGE_DEFAULT, auditOf(request)));
        const accepted = await copies.sync(principalOf(request), body, undefined, auditOf(request));
        deps.queued();
        return reply.code(202).send(accepted);
      },
    );
  };
