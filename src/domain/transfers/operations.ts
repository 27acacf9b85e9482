// Move, remove (and its preview) and pull (docs/api.md, "Move, remove, pull"): each request's paths
// resolved and checked (paths.ts) before anything is queued; the work itself runs in the worker
// (src/engine). What a move or remove would do is previewed by previews.ts.

import type { Clock } from '../../clock.js';
import type { Db } from '../../db/database.js';
import { newId } from '../../ids.js';
import { isSeveral, type ObjectRef, type TransferSpec } from '../../lifecycle/specs.js';
import type { Queued } from '../../lifecycle/transfers.js';
import * as transfers from '../../lifecycle/transfers.js';
import type { Egress } from '../../net/egress.js';
import { checkPullHost, checkPullUrl } from '../../objects/fetch-url.js';
import type { FilterInput } from '../../objects/filter.js';
import type { PatternLimits } from '../../objects/glob.js';
import { isPattern, splitPattern } from '../../objects/patterns.js';
import type { Entry } from '../../stores/contract.js';
import { type AuditAction, type AuditContext, record } from '../audit/audit.js';
import type { Caller } from '../caller.js';
import type { Locations } from '../locations/locations.js';
import type { Storage } from '../storage.js';
import { backupRef, checkBackupTo } from './backup-to.js';
import { OperationPaths, oneOrSeveral, type Resolved } from './paths.js';
import { Previews } from './previews.js';
import { queueWithJob } from './queue-with-job.js';

export class Operations {
  private readonly paths: OperationPaths;
  private readonly previews: Previews;

  constructor(
    private readonly db: Db,
    private readonly locations: Locations,
    storage: Storage,
    private readonly egress: Egress,
    private readonly clock: Clock,
    patternLimits: PatternLimits,
  ) {
    this.paths = new OperationPaths(locations, patternLimits);
    this.previews = new Previews(this.paths, locations, storage);
  }

  /** A source `<location>/<file or pattern>`, checked as move and remove check theirs (share, send). */
  resolveSource(caller: Caller, value: string, field: string, literal = false): Promise<Resolved> {
    return this.paths.resolveSource(caller, value, field, literal);
  }

  /**
   * A transfer over several objects is run by a job of its own, object by object (docs/engine.md):
   * both rows in one transaction, so neither exists without the other.
   */
  private queue(
    workspaceId: string,
    spec: TransferSpec,
    given: transfers.Given,
    audit: Audited,
    id: string = newId(),
  ): Promise<Queued> {
    const now = this.clock.now();
    const several = isSeveral(spec, (ref) => isPattern(ref.path, ref.literal));
    return this.db.kysely.transaction().execute(async (trx) => {
      const queued = several
        ? (await queueWithJob(trx, workspaceId, spec, given, now, undefined, id)).queued
        : await transfers.enqueue(trx, workspaceId, spec, now, given, false, undefined, id);
      // The request's record, last: on the transfer (pull), or on the location paths it gave.
      await record(
        trx,
        audit.context,
        { action: audit.action, target: audit.target ?? queued.id, status: audit.status },
        now,
      );
      return queued;
    });
  }

  /** The spec /move would queue, checked as /move checks it (a dry run of a move: src/domain/plans). */
  async moveSpec(
    caller: Caller,
    from: string | string[],
    to: string,
    literal = false,
    filterInput?: FilterInput,
  ) {
    const { sources, destination } = await this.paths.movePaths(caller, from, to, literal);
    const filter = this.paths.checkFilter(filterInput, sources);
    return {
      kind: 'move',
      sources,
      destination,
      ...(filter === undefined ? {} : { filter }),
    } satisfies TransferSpec;
  }

  /** The spec /remove would queue, checked as /remove checks it. */
  async removeSpec(caller: Caller, path: string | string[], literal = false, filterInput?: FilterInput) {
    const targets = await this.paths.removalPaths(caller, path, literal);
    for (const p of targets) this.paths.checkActive(p.row);
    const refs: ObjectRef[] = targets.map((p) => ({
      location_id: p.row.id,
      path: p.path,
      ...(literal ? { literal: true as const } : {}),
    }));
    const filter = this.paths.checkFilter(filterInput, refs);
    return {
      kind: 'remove',
      paths: refs,
      ...(filter === undefined ? {} : { filter }),
    } satisfies TransferSpec;
  }

  async move(
    caller: Caller,
    from: string | string[],
    to: string,
    literal: boolean,
    filterInput: FilterInput | undefined,
    audit: AuditContext,
    backupTo?: string,
  ): Promise<Queued> {
    const { workspaceId } = caller;
    const spec = await this.moveSpec(caller, from, to, literal, filterInput);
    // What the move overwrites at its destination is kept (docs/api.md, "Undo").
    const changes = [...spec.sources.map(changedPrefix), spec.destination];
    const backup = await checkBackupTo(this.locations, caller, backupTo, changes, this.clock.now());
    const id = newId();
    return this.queue(
      workspaceId,
      backup === undefined ? spec : { ...spec, backup: backupRef(backup, id), backup_to: backup.given },
      { from, to },
      { context: audit, action: 'move', target: givenPaths(from), status: 202 },
      id,
    );
  }

  /** What /move would move now and where, streamed; nothing is moved (previews.ts). */
  movePreview(
    caller: Caller,
    from: string | string[],
    to: string,
    literal = false,
    filterInput?: FilterInput,
  ): Promise<AsyncIterable<{ from: string; to: string }>> {
    return this.previews.move(caller, from, to, literal, filterInput);
  }

  async remove(
    caller: Caller,
    path: string | string[],
    literal: boolean,
    filterInput: FilterInput | undefined,
    audit: AuditContext,
    backupTo?: string,
  ): Promise<Queued> {
    const { workspaceId } = caller;
    const spec = await this.removeSpec(caller, path, literal, filterInput);
    // What it removes is kept first (docs/api.md, "Undo").
    const backup = await checkBackupTo(
      this.locations,
      caller,
      backupTo,
      spec.paths.map(changedPrefix),
      this.clock.now(),
    );
    const id = newId();
    return this.queue(
      workspaceId,
      backup === undefined ? spec : { ...spec, backup: backupRef(backup, id), backup_to: backup.given },
      { from: path },
      { context: audit, action: 'remove', target: givenPaths(path), status: 202 },
      id,
    );
  }

  /** What /remove would remove now, streamed; nothing is removed (previews.ts). */
  preview(
    caller: Caller,
    path: string | string[],
    literal = false,
    filterInput?: FilterInput,
  ): Promise<AsyncIterable<Entry>> {
    return this.previews.remove(caller, path, literal, filterInput);
  }

  async pull(caller: Caller, from: string | string[], to: string, audit: AuditContext): Promise<Queued> {
    const { workspaceId } = caller;
    const urls = oneOrSeveral(from, 'from');
    for (const url of urls) await checkPullHost(checkPullUrl(url), this.egress);
    const destination = await this.paths.destination(caller, to, urls.length > 1);
    // Recorded on its transfer: a URL may carry a secret in its query, and is not the record's to keep.
    return this.queue(
      workspaceId,
      { kind: 'pull', urls, destination },
      { from, to },
      { context: audit, action: 'pull', status: 200 },
    );
  }
}

/** What a request's record says of the transfer it queues: the target when not the transfer's id. */
interface Audited {
  context: AuditContext;
  action: AuditAction;
  target?: string;
  status: number;
}

/** What a source changes, as a prefix: a pattern's literal base (as a folder), or the path itself. */
function changedPrefix(ref: ObjectRef): ObjectRef {
  if (!isPattern(ref.path, ref.literal)) return { location_id: ref.location_id, path: ref.path };
  const { base } = splitPattern(ref.path);
  return { location_id: ref.location_id, path: base === '' ? '' : `${base}/` };
}

/** The `<location>/<path>` (or several, comma-separated) a move or remove was given. */
function givenPaths(given: string | string[]): string {
  return typeof given === 'string' ? given : given.join(', ');
}
