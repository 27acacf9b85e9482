// POST /v1/copy (docs/api.md, "Copy"): validate everything first (an invalid request is 400 and does not count
// against the limit), then take a place in the workspace's limit and queue a transfer (one object)
// or a job (a prefix).
import type { Clock } from '../../clock.js';
import type { LocationRow } from '../../db/schema.js';
import * as jobs from '../../engine/lifecycle/jobs.js';
import * as transfers from '../../engine/lifecycle/transfers.js';
import { conflict, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { hasBuckets, rotationClass } from '../../providers.js';
import type { Overwrite } from '../../states.js';
import type { Locations } from '../locations/locations.js';
import type { RateLimits } from '../rate-limit.js';
import {
  checkManifest,
  checkObjectPath,
  checkPrefix,
  parseTarget,
  prefixesOverlap,
  type Target,
  type TargetInput,
} from './targets.js';

export interface CopyRequest {
  from: TargetInput;
  to: TargetInput;
  manifest?: string[];
  overwrite?: Overwrite;
}

/** A copy request that passed every check, with its locations resolved. */
export interface CheckedCopy {
  bulk: boolean;
  from: Target;
  to: Target;
  source: LocationRow;
  destination: LocationRow;
}

export type CopyAccepted = { id: string; status: 'queued' } | { job_id: string; status: 'planning' };

/**
 * A single-use token (onedrive, box) that expires within this window cannot be trusted to last a
 * copy: the copy is refused with 409 until the location is refreshed (docs/api.md, "Copy").
 */
export const SINGLE_USE_MARGIN_MS = 5 * 60_000;

/** 409 unless the location is active and its token lasts (docs/api.md, "Copy"); `what` the refused work. */
export function checkUsable(row: LocationRow, now: number, what = 'copies'): void {
  if (row.status !== 'active') {
    throw conflict(
      `location ${row.label} (${row.id}) is ${row.status}; only active locations accept ${what}`,
    );
  }
  const provider = row.provider;
  if (
    rotationClass(provider) === 'oauth-single-use' &&
    row.access_token_expires_at !== null &&
    row.access_token_expires_at <= now + SINGLE_USE_MARGIN_MS
  ) {
    throw conflict(
      `the access token of location ${row.label} (${row.id}) is expired or expires within 5 minutes; refresh it (POST /v1/locations/refresh) and retry`,
    );
  }
}

export class Copies {
  constructor(
    private readonly locations: Locations,
    private readonly clock: Clock,
    private readonly limits: RateLimits,
  ) {}

  async accept(workspaceId: string, request: CopyRequest): Promise<CopyAccepted> {
    return this.#queue(workspaceId, request, await this.check(workspaceId, request));
  }

  /**
   * Starts a bulk copy for a schedule's run (docs/api.md, "Schedules"): checked and counted against the
   * workspace's limit as POST /v1/copy is, its job carrying the schedule's id.
   */
  async startScheduled(
    workspaceId: string,
    request: CopyRequest,
    scheduleId: string,
  ): Promise<{ job_id: string; status: 'planning' }> {
    const checked = await this.checkScheduled(workspaceId, request);
    return (await this.#queue(workspaceId, request, checked, scheduleId)) as {
      job_id: string;
      status: 'planning';
    };
  }

  /** check(), and a schedule runs bulk jobs only: a prefix copy (docs/api.md, "Schedules"). */
  async checkScheduled(workspaceId: string, request: CopyRequest): Promise<CheckedCopy> {
    const checked = await this.check(workspaceId, request);
    if (!checked.bulk) throw invalid('action.copy must copy a prefix: "from" and "to" must end with "/"');
    return checked;
  }

  /**
   * Everything POST /v1/copy checks before it queues (400, 404, 409), without queueing: the route and
   * a schedule's create and run (docs/api.md, "Schedules") share it.
   */
  async check(workspaceId: string, request: CopyRequest): Promise<CheckedCopy> {
    const from = parseTarget(request.from, 'from');
    const to = parseTarget(request.to, 'to');
    const bulk = from.path.endsWith('/');
    if (!bulk && request.overwrite !== undefined)
      throw invalid('overwrite applies only to a bulk (prefix) copy');
    if (!bulk && request.manifest !== undefined)
      throw invalid('manifest applies only to a bulk (prefix) copy');
    if (bulk !== to.path.endsWith('/')) {
      throw invalid(
        bulk
          ? 'a prefix copy needs a prefix destination: "to" must end with "/"'
          : '"to" ends with "/" (a prefix) but "from" names one object: end "from" with "/" to copy every object under it, or give "to" the full name of the object to write',
      );
    }
    if (request.manifest !== undefined) checkManifest(request.manifest);
    const source = await this.locations.resolve(workspaceId, from.ref);
    const destination = await this.locations.resolve(workspaceId, to.ref);
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
    return { bulk, from, to, source, destination };
  }

  #queue(
    workspaceId: string,
    request: CopyRequest,
    checked: CheckedCopy,
    scheduleId?: string,
  ): Promise<CopyAccepted> {
    const { bulk, from, to, source, destination } = checked;
    const now = this.clock.now();

    return this.limits.within(workspaceId, 'copy', async (trx) => {
      if (!bulk) {
        return transfers.enqueue(
          trx,
          workspaceId,
          {
            kind: 'copy',
            source: { location_id: source.id, path: from.path },
            destination: { location_id: destination.id, path: to.path },
          },
          now,
          { from: request.from, to: request.to },
        );
      }
      return jobs.create(
        trx,
        {
          id: newId(),
          workspaceId,
          source: JSON.stringify({ location_id: source.id, path: from.path }),
          destination: JSON.stringify({ location_id: destination.id, path: to.path }),
          overwrite: request.overwrite ?? 'always',
          manifest: request.manifest,
          ...(scheduleId === undefined ? {} : { scheduleId }),
        },
        now,
      );
    });
  }
}
