// POST /v1/copy (docs/api.md, "Copy"): validate everything first (an invalid request is 400 and does not count
// against the limit), then take a place in the workspace's limit and queue a transfer (one object)
// or a job (a prefix).

import type { Transaction } from 'kysely';
import type { Clock } from '../../clock.js';
import type { Database, LocationRow } from '../../db/schema.js';
import { jobDestination, jobOptions, jobSource } from '../../durable/work.js';
import { commonListingHashes } from '../../engine/sync-plan.js';
import { invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import * as jobs from '../../lifecycle/jobs.js';
import type { JobOptions } from '../../lifecycle/specs.js';
import * as transfers from '../../lifecycle/transfers.js';
import { type FilterInput, type FilterSpec, parseFilter } from '../../objects/filter.js';
import { DEFAULT_PATTERN_LIMITS, type PatternLimits } from '../../objects/glob.js';
import { hasBuckets, listingHashes, type Provider } from '../../providers.js';
import {
  COMPARE_MODES,
  type CompareMode,
  type Overwrite,
  VERIFY_MODES,
  type VerifyMode,
} from '../../states.js';
import { type AuditContext, record } from '../audit/audit.js';
import type { Caller } from '../caller.js';
import type { Locations } from '../locations/locations.js';
import { checkUsable } from '../locations/usable.js';
import type { RateLimits } from '../rate-limit.js';
import { type BackupTo, backupRef, checkBackupTo } from './backup-to.js';
import { parseBandwidthLimit } from './bandwidth.js';
import {
  checkManifest,
  checkObjectPath,
  checkPrefix,
  parseTarget,
  prefixesOverlap,
  type TargetInput,
} from './targets.js';

export interface CopyRequest {
  from: TargetInput;
  to: TargetInput;
  manifest?: string[];
  overwrite?: Overwrite;
  filter?: FilterInput;
  /** Bytes per second through ferry (docs/api.md, "Bandwidth"). */
  bandwidth_limit?: number;
  /** Where what a bulk copy overwrites is kept (docs/api.md, "Undo"). */
  backup_to?: string;
}

/** POST /v1/sync (docs/api.md, "Sync"). */
export interface SyncRequest {
  from: TargetInput;
  to: TargetInput;
  compare?: CompareMode;
  delete?: boolean;
  max_delete?: number;
  filter?: FilterInput;
  bandwidth_limit?: number;
  /** Where what the sync deletes or overwrites is kept (docs/api.md, "Undo"). */
  backup_to?: string;
}

/** POST /v1/verify (docs/api.md, "Verify"). */
export interface VerifyRequest {
  from: TargetInput;
  to: TargetInput;
  mode?: VerifyMode;
  filter?: FilterInput;
}

/** A copy that passed every check: its locations, paths, and when it was checked. */
export interface CheckedCopy {
  bulk: boolean;
  source: LocationRow;
  destination: LocationRow;
  from: string;
  to: string;
  now: number;
  /** The filter given, parsed (a bulk copy's). */
  filter?: FilterSpec | undefined;
  /** The cap given, checked (docs/api.md, "Bandwidth"). */
  bandwidthLimit?: number | undefined;
  /** `backup_to`, checked (a bulk copy's). */
  backup?: BackupTo | undefined;
}

/** A sync that passed every check: its locations, prefixes, and options as the job keeps them. */
export interface CheckedSync {
  source: LocationRow;
  destination: LocationRow;
  from: string;
  to: string;
  options: JobOptions;
  now: number;
  bandwidthLimit?: number | undefined;
  backup?: BackupTo | undefined;
}

export type CopyAccepted = { id: string; status: 'queued' } | { job_id: string; status: 'planning' };

/**
 * The audit record of a copy or sync a request made (202), last in the transaction that queued it: its
 * own action on its transfer or job, or for a schedule's run the request made (POST
 * /v1/schedules/{id}/run) schedule.run on the schedule. A run by the scheduler has no audit: nothing.
 */
async function recorded(
  trx: Transaction<Database>,
  audit: AuditContext | undefined,
  action: 'copy' | 'sync' | 'verify',
  accepted: CopyAccepted,
  scheduleId: string | undefined,
  now: number,
): Promise<CopyAccepted> {
  if (audit === undefined) return accepted;
  const target = 'id' in accepted ? accepted.id : accepted.job_id;
  await record(
    trx,
    audit,
    scheduleId === undefined
      ? { action, target, status: 202 }
      : { action: 'schedule.run', target: scheduleId, status: 202 },
    now,
  );
  return accepted;
}

export class Copies {
  constructor(
    private readonly locations: Locations,
    private readonly clock: Clock,
    private readonly limits: RateLimits,
    private readonly patternLimits: PatternLimits = DEFAULT_PATTERN_LIMITS,
  ) {}

  /**
   * Every check of a copy, before anything is queued (a dry run makes the same ones): the resolved
   * locations and paths.
   */
  async check(caller: Caller, request: CopyRequest): Promise<CheckedCopy> {
    const from = parseTarget(request.from, 'from');
    const to = parseTarget(request.to, 'to');
    const bulk = from.path.endsWith('/');
    if (!bulk && request.overwrite !== undefined)
      throw invalid('overwrite applies only to a bulk (prefix) copy');
    if (!bulk && request.manifest !== undefined)
      throw invalid('manifest applies only to a bulk (prefix) copy');
    if (!bulk && request.filter !== undefined) throw invalid('filter applies only to a bulk (prefix) copy');
    if (request.manifest !== undefined && request.filter !== undefined)
      throw invalid('filter applies to a listed prefix, not to a manifest: give one or the other');
    const filter = request.filter === undefined ? undefined : parseFilter(request.filter, this.patternLimits);
    const { source, destination } = await this.targets(caller, from, to, bulk, request.manifest);
    const bandwidthLimit = parseBandwidthLimit(request.bandwidth_limit);
    const now = this.clock.now();
    if (!bulk && request.backup_to !== undefined)
      throw invalid('backup_to applies to a bulk (prefix) copy, a sync, a move or a remove');
    const backup = await checkBackupTo(
      this.locations,
      caller,
      request.backup_to,
      [{ location_id: destination.id, path: to.path }],
      now,
    );
    return { bulk, source, destination, from: from.path, to: to.path, now, filter, bandwidthLimit, backup };
  }

  /**
   * Queues the copy (POST /v1/copy), or a schedule's run of it (docs/api.md, "Schedules"): its job then
   * carries the schedule's id.
   */
  async accept(
    caller: Caller,
    request: CopyRequest,
    scheduleId?: string,
    audit?: AuditContext,
  ): Promise<CopyAccepted> {
    const { workspaceId } = caller;
    const checked = await this.check(caller, request);
    if (scheduleId !== undefined) scheduledBulk(checked);
    const { bulk, source, destination, now, filter, bandwidthLimit, backup, ...paths } = checked;
    const from = { path: paths.from };
    const to = { path: paths.to };

    return this.limits.within(workspaceId, 'copy', async (trx) => {
      if (!bulk) {
        const queued = await transfers.enqueue(
          trx,
          workspaceId,
          {
            kind: 'copy',
            source: { location_id: source.id, path: from.path },
            destination: { location_id: destination.id, path: to.path },
          },
          now,
          { from: request.from, to: request.to },
          false,
          bandwidthLimit,
        );
        return recorded(trx, audit, 'copy', queued, scheduleId, now);
      }
      const id = newId();
      const options: JobOptions = {
        ...(filter === undefined ? {} : { filter }),
        ...(backup === undefined ? {} : { backup_to: backup.given, backup: backupRef(backup, id) }),
      };
      const created = await jobs.create(
        trx,
        {
          id,
          workspaceId,
          source: jobSource.encode({ location_id: source.id, path: from.path }),
          destination: jobDestination.encode({ location_id: destination.id, path: to.path }),
          overwrite: request.overwrite ?? 'always',
          manifest: request.manifest,
          ...(Object.keys(options).length === 0 ? {} : { options: jobOptions.encode(options) }),
          ...(backup === undefined ? {} : { touches: [source.id, destination.id, backup.row.id] }),
          ...(bandwidthLimit === undefined ? {} : { bandwidthLimit }),
          ...(scheduleId === undefined ? {} : { scheduleId }),
        },
        now,
      );
      return recorded(trx, audit, 'copy', created, scheduleId, now);
    });
  }

  /** check(), and a schedule runs bulk jobs only: a prefix copy (docs/api.md, "Schedules"). */
  async checkScheduled(caller: Caller, request: CopyRequest): Promise<CheckedCopy> {
    return scheduledBulk(await this.check(caller, request));
  }

  /** A schedule's run of a bulk copy: checked and counted against the limit as POST /v1/copy is. */
  async startScheduled(
    caller: Caller,
    request: CopyRequest,
    scheduleId: string,
    /** A run a request made (POST /v1/schedules/{id}/run); none for the scheduler's. */
    audit?: AuditContext,
  ): Promise<{ job_id: string; status: 'planning' }> {
    return (await this.accept(caller, request, scheduleId, audit)) as {
      job_id: string;
      status: 'planning';
    };
  }

  /** Every check of a sync, before anything is queued (its dry run makes the same ones). */
  async checkSync(caller: Caller, request: SyncRequest): Promise<CheckedSync> {
    const from = parseTarget(request.from, 'from');
    const to = parseTarget(request.to, 'to');
    const compare = request.compare ?? 'size-modtime';
    if (!(COMPARE_MODES as readonly string[]).includes(compare))
      throw invalid(`compare must be one of ${COMPARE_MODES.join(', ')}`);
    if (request.delete !== undefined && typeof request.delete !== 'boolean')
      throw invalid('delete must be true or false');
    // Without max_delete the limit is worked out when the destination is listed (src/engine/sync-plan.ts).
    const maxDelete = request.max_delete;
    if (maxDelete !== undefined && (!Number.isSafeInteger(maxDelete) || maxDelete < 0))
      throw invalid('max_delete must be a whole number, 0 or more');
    if (request.max_delete !== undefined && request.delete !== true)
      throw invalid('max_delete applies only with delete: true');
    const filter = request.filter === undefined ? undefined : parseFilter(request.filter, this.patternLimits);
    const { source, destination } = await this.targets(caller, from, to, true, undefined);
    if (compare === 'checksum' && commonListingHashes(source.provider, destination.provider).length === 0) {
      const said = (p: Provider) => listingHashes(p).join(', ') || 'none';
      throw invalid(
        `compare checksum: the listings of ${source.provider} (${said(source.provider)}) and ${destination.provider} (${said(destination.provider)}) report no checksum in common; use size-modtime or size`,
      );
    }
    const options: JobOptions = {
      compare,
      delete: request.delete === true,
      ...(request.delete === true && maxDelete !== undefined ? { max_delete: maxDelete } : {}),
      ...(filter === undefined ? {} : { filter }),
    };
    const bandwidthLimit = parseBandwidthLimit(request.bandwidth_limit);
    const now = this.clock.now();
    const backup = await checkBackupTo(
      this.locations,
      caller,
      request.backup_to,
      [{ location_id: destination.id, path: to.path }],
      now,
    );
    return {
      source,
      destination,
      from: from.path,
      to: to.path,
      options,
      now,
      bandwidthLimit,
      backup,
    };
  }

  /**
   * A sync (docs/api.md, "Sync"): prefix targets checked as a bulk copy's, then its own options; a
   * job of kind sync, in the copy limit's bucket.
   */
  async sync(
    caller: Caller,
    request: SyncRequest,
    scheduleId?: string,
    audit?: AuditContext,
  ): Promise<{ job_id: string; status: 'planning' }> {
    const { workspaceId } = caller;
    const { source, destination, options, now, bandwidthLimit, backup, ...paths } = await this.checkSync(
      caller,
      request,
    );
    const from = { path: paths.from };
    const to = { path: paths.to };
    return this.limits.within(workspaceId, 'copy', async (trx) => {
      const id = newId();
      const kept: JobOptions =
        backup === undefined
          ? options
          : { ...options, backup_to: backup.given, backup: backupRef(backup, id) };
      const created = await jobs.create(
        trx,
        {
          id,
          workspaceId,
          kind: 'sync',
          options: jobOptions.encode(kept),
          ...(backup === undefined ? {} : { touches: [source.id, destination.id, backup.row.id] }),
          ...(bandwidthLimit === undefined ? {} : { bandwidthLimit }),
          ...(scheduleId === undefined ? {} : { scheduleId }),
          source: jobSource.encode({ location_id: source.id, path: from.path }),
          destination: jobDestination.encode({ location_id: destination.id, path: to.path }),
          overwrite: 'always',
          manifest: undefined,
        },
        now,
      );
      await recorded(trx, audit, 'sync', created, scheduleId, now);
      return created;
    });
  }

  /**
   * Every check of a verify (docs/api.md, "Verify"): prefix targets checked as a sync's (a verify of a
   * prefix against itself, or one inside the other, is refused as theirs are), then its mode and filter.
   */
  async checkVerify(caller: Caller, request: VerifyRequest): Promise<CheckedSync> {
    const from = parseTarget(request.from, 'from');
    const to = parseTarget(request.to, 'to');
    const mode = request.mode ?? 'checksum';
    if (!(VERIFY_MODES as readonly string[]).includes(mode))
      throw invalid(`mode must be one of ${VERIFY_MODES.join(', ')}`);
    const filter = request.filter === undefined ? undefined : parseFilter(request.filter, this.patternLimits);
    const { source, destination } = await this.targets(caller, from, to, true, undefined);
    const options: JobOptions = { mode, ...(filter === undefined ? {} : { filter }) };
    return { source, destination, from: from.path, to: to.path, options, now: this.clock.now() };
  }

  /**
   * A verify (docs/api.md, "Verify"): a job of kind verify, which reads and changes nothing; in the copy
   * limit's bucket, as a sync, since it lists both prefixes and may read every byte of both.
   */
  async verify(
    caller: Caller,
    request: VerifyRequest,
    scheduleId?: string,
    audit?: AuditContext,
  ): Promise<{ job_id: string; status: 'planning' }> {
    const { workspaceId } = caller;
    const { source, destination, options, now, from, to } = await this.checkVerify(caller, request);
    return this.limits.within(workspaceId, 'copy', async (trx) => {
      const created = await jobs.create(
        trx,
        {
          id: newId(),
          workspaceId,
          kind: 'verify',
          options: jobOptions.encode(options),
          ...(scheduleId === undefined ? {} : { scheduleId }),
          source: jobSource.encode({ location_id: source.id, path: from }),
          destination: jobDestination.encode({ location_id: destination.id, path: to }),
          overwrite: 'always',
          manifest: undefined,
        },
        now,
      );
      await recorded(trx, audit, 'verify', created, scheduleId, now);
      return created;
    });
  }

  /** The checks a copy's (or sync's) targets pass, in order; both locations resolved and usable. */
  private async targets(
    caller: Caller,
    from: ReturnType<typeof parseTarget>,
    to: ReturnType<typeof parseTarget>,
    bulk: boolean,
    manifest: string[] | undefined,
  ): Promise<{ source: LocationRow; destination: LocationRow }> {
    if (bulk !== to.path.endsWith('/')) {
      throw invalid(
        bulk
          ? 'a prefix copy needs a prefix destination: "to" must end with "/"'
          : '"to" ends with "/" (a prefix) but "from" names one object: end "from" with "/" to copy every object under it, or give "to" the full name of the object to write',
      );
    }
    if (manifest !== undefined) checkManifest(manifest);
    const source = await this.locations.resolve(caller, from.ref);
    const destination = await this.locations.resolve(caller, to.ref);
    if (bulk) {
      checkPrefix(from.path, 'from');
      checkPrefix(to.path, 'to');
    } else {
      checkObjectPath(from.path, 'from', hasBuckets(source.provider));
      checkObjectPath(to.path, 'to', hasBuckets(destination.provider));
    }
    if (source.id === destination.id) {
      if (from.path === to.path) throw invalid('a copy onto itself is not allowed');
      if (bulk && prefixesOverlap(from.path, to.path)) {
        throw invalid(
          'the destination prefix must not lie inside the source prefix, nor the source inside the destination',
        );
      }
    }
    const now = this.clock.now();
    checkUsable(source, now);
    checkUsable(destination, now);
    return { source, destination };
  }
}

function scheduledBulk(checked: CheckedCopy): CheckedCopy {
  if (!checked.bulk) throw invalid('action.copy must copy a prefix: "from" and "to" must end with "/"');
  return checked;
}
