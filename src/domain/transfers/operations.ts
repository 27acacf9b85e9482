// Move, remove (and its preview) and pull (docs/api.md, "Move, remove, pull"). Paths
// take the form <location>/<path>, the first segment being the location's label or UUID. Everything
// is checked before anything is queued; the work itself runs in the worker (src/engine).

import { MAX_SOURCES } from '../../api/input.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/database.js';
import type { LocationRow } from '../../db/schema.js';
import { jobDestination, jobSource } from '../../durable/work.js';
import * as jobs from '../../lifecycle/jobs.js';
import type { Queued } from '../../lifecycle/transfers.js';
import * as transfers from '../../lifecycle/transfers.js';
import { destinationPath } from '../../engine/run-transfer.js';
import { isSeveral, type ObjectRef, specLocations, type TransferSpec } from '../../lifecycle/specs.js';
import { conflict, invalid, isFerryError, notFound } from '../../errors.js';
import { isUuid, newId } from '../../ids.js';
import type { Egress } from '../../net/egress.js';
import { checkPullHost, checkPullUrl } from '../../objects/fetch-url.js';
import {
  compileFilter,
  type Filter,
  type FilterInput,
  type FilterSpec,
  parseFilter,
} from '../../objects/filter.js';
import type { PatternLimits } from '../../objects/glob.js';
import { checkPattern, expandSources, isPattern, splitPattern } from '../../objects/patterns.js';
import { hasBuckets } from '../../providers.js';
import type { Queryable } from '../../queue/moves.js';
import type { Entry } from '../../stores/contract.js';
import { slicer } from '../../util/slicer.js';
import { type AuditAction, type AuditContext, record } from '../audit/audit.js';
import type { Caller } from '../caller.js';
import type { Locations } from '../locations/locations.js';
import type { Storage } from '../storage.js';
import { backupRef, checkBackupTo } from './backup-to.js';

export interface Resolved {
  row: LocationRow;
  path: string;
}

function list(value: string | string[], field: string): string[] {
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) throw invalid(`${field} must name at least one path`);
  if (items.length > MAX_SOURCES) throw invalid(`${field} may name at most ${MAX_SOURCES} paths`);
  return items;
}

/**
 * A location not found under a name holding `:` is most likely the copy grammar (`location:path`) sent
 * to a route that takes `location/path` (docs/api.md, "Addressing a location"): the error says so and
 * shows the value rewritten. Anything else passes unchanged.
 */
function teachSlashForm(err: unknown, value: string, field: string): unknown {
  const colon = value.indexOf(':');
  const slash = value.indexOf('/');
  if (!isFerryError(err, 'not_found') || colon <= 0 || (slash >= 0 && slash < colon)) return err;
  const rewritten = `${value.slice(0, colon)}/${value.slice(colon + 1).replace(/^\/+/, '')}`;
  return notFound(
    `${err.message}; ${field} takes "<location>/<path>" here (the "<location>:<path>" form is for /v1/copy): did you mean "${rewritten}"?`,
  );
}

export class Operations {
  constructor(
    private readonly db: Db,
    private readonly locations: Locations,
    private readonly storage: Storage,
    private readonly egress: Egress,
    private readonly clock: Clock,
    private readonly patternLimits: PatternLimits,
  ) {}

  /** `<location>/<path>`: the location by label or UUID (docs/api.md, "Addressing a location"), the rest verbatim. */
  private async resolvePath(caller: Caller, value: string, field: string): Promise<Resolved> {
    const slash = value.indexOf('/');
    const location = slash < 0 ? value : value.slice(0, slash);
    const path = slash < 0 ? '' : value.slice(slash + 1);
    if (location === '') throw invalid(`${field} must start with the location: "<location>/<path>"`);
    try {
      const row = await this.locations.resolve(
        caller,
        isUuid(location) ? { id: location } : { name: location },
      );
      return { row, path };
    } catch (err) {
      throw teachSlashForm(err, value, field);
    }
  }

  /** A source or removal path: a file, or a pattern below the bucket on bucket stores. */
  private checkSource(resolved: Resolved, field: string, literal: boolean): void {
    const { path, row } = resolved;
    const pattern = isPattern(path, literal);
    if (path === '' || path.endsWith('/'))
      throw invalid(`${field} must name a file or a pattern, not a folder`);
    if (path.startsWith('/')) throw invalid(`${field} has an empty segment after the location`);
    if (path.split('/').includes('..')) throw invalid(`${field} must not contain a ".." segment`);
    if (pattern) this.checkPattern(path, field);
    if (pattern && hasBuckets(row.provider) && !splitPattern(path).base) {
      throw invalid(`${field}: a pattern must start below the bucket ("bucket/*.txt")`);
    }
    if (!pattern && hasBuckets(row.provider) && !path.includes('/')) {
      throw invalid(`${field} needs a bucket and a key: "<location>/bucket/key"`);
    }
  }

  /** A pattern within the limits of docs/api.md, "Limits" (400 naming the limit otherwise). */
  private checkPattern(path: string, field: string): void {
    try {
      checkPattern(path, this.patternLimits);
    } catch (err) {
      if (isFerryError(err, 'invalid')) throw invalid(`${field}: ${err.message}`);
      throw err;
    }
  }

  /** A source `<location>/<file or pattern>`, checked as move and remove check theirs (share, send). */
  async resolveSource(caller: Caller, value: string, field: string, literal = false): Promise<Resolved> {
    const resolved = await this.resolvePath(caller, value, field);
    this.checkSource(resolved, field, literal);
    this.checkActive(resolved.row);
    return resolved;
  }

  private checkActive(row: LocationRow): void {
    if (row.status !== 'active') throw conflict(`location ${row.label} (${row.id}) is ${row.status}`);
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
    const { sources, destination } = await this.movePlan(caller, from, to, literal);
    const filter = this.checkFilter(filterInput, sources);
    return {
      kind: 'move',
      sources,
      destination,
      ...(filter === undefined ? {} : { filter }),
    } satisfies TransferSpec;
  }

  /** The spec /remove would queue, checked as /remove checks it. */
  async removeSpec(caller: Caller, path: string | string[], literal = false, filterInput?: FilterInput) {
    const paths = await this.removalPaths(caller, path, literal);
    for (const p of paths) this.checkActive(p.row);
    const refs: ObjectRef[] = paths.map((p) => ({
      location_id: p.row.id,
      path: p.path,
      ...(literal ? { literal: true as const } : {}),
    }));
    const filter = this.checkFilter(filterInput, refs);
    return {
      kind: 'remove',
      paths: refs,
      ...(filter === undefined ? {} : { filter }),
    } satisfies TransferSpec;
  }

  private async destination(caller: Caller, to: string, several: boolean) {
    const resolved = await this.resolvePath(caller, to, 'to');
    const folder = resolved.path === '' || resolved.path.endsWith('/');
    if (several && !folder)
      throw invalid('several sources, or a pattern, need a destination folder: "to" must end with "/"');
    if (resolved.path.split('/').includes('..')) throw invalid('to must not contain a ".." segment');
    if (!folder && hasBuckets(resolved.row.provider) && !resolved.path.includes('/')) {
      throw invalid('to needs a bucket and a key, or a folder ending with "/"');
    }
    if (folder && hasBuckets(resolved.row.provider) && resolved.path === '') {
      throw invalid('to needs a bucket: "<location>/bucket/"');
    }
    this.checkActive(resolved.row);
    return { location_id: resolved.row.id, path: resolved.path, folder };
  }

  /**
   * A filter on a move or remove (docs/api.md, "Filters"): checked, and only with a pattern among the
   * sources, which is what it narrows.
   */
  private checkFilter(input: FilterInput | undefined, refs: ObjectRef[]): FilterSpec | undefined {
    if (input === undefined) return undefined;
    const spec = parseFilter(input, this.patternLimits);
    if (!refs.some((ref) => isPattern(ref.path, ref.literal)))
      throw invalid('filter applies only to patterned sources ("<location>/bucket/dir/**")');
    return spec;
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

  /**
   * What /move would move now and where, streamed; nothing is moved. The same expansion and
   * destination naming as the worker (expandSources, destinationPath of src/engine/run-transfer.ts).
   */
  async movePreview(
    caller: Caller,
    from: string | string[],
    to: string,
    literal = false,
    filterInput?: FilterInput,
  ): Promise<AsyncIterable<{ from: string; to: string }>> {
    const { sources, destination } = await this.movePlan(caller, from, to, literal);
    const filter = compileFilter(this.checkFilter(filterInput, sources));
    const labels = new Map<string, string>();
    const rows = new Map<string, LocationRow>();
    for (const ref of [...sources, destination]) {
      if (rows.has(ref.location_id)) continue;
      const row = await this.locations.resolve(caller, { id: ref.location_id });
      rows.set(row.id, row);
      labels.set(row.id, row.label);
    }
    const entries = this.expandRefs(sources, rows, filter);
    const first = await entries.head();
    const destLabel = labels.get(destination.location_id) as string;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const { ref, entry } of first) {
          yield {
            from: `${labels.get(ref.location_id) as string}/${entry.path}`,
            to: `${destLabel}/${destinationPath(destination, ref, entry)}`,
          };
        }
      },
    };
  }

  private async movePlan(caller: Caller, from: string | string[], to: string, literal: boolean) {
    const sources: ObjectRef[] = [];
    const items = list(from, 'from');
    // Up to MAX_SOURCES checks, each compiling a pattern: the event loop runs between slices of them.
    const pause = slicer();
    for (const item of items) {
      await pause();
      const resolved = await this.resolvePath(caller, item, 'from');
      this.checkSource(resolved, 'from', literal);
      this.checkActive(resolved.row);
      sources.push({
        location_id: resolved.row.id,
        path: resolved.path,
        ...(literal ? { literal: true } : {}),
      });
    }
    const several = sources.length > 1 || sources.some((s) => isPattern(s.path, s.literal));
    const destination = await this.destination(caller, to, several);
    for (const s of sources) {
      if (s.location_id === destination.location_id && !destination.folder && s.path === destination.path) {
        throw invalid('a move onto itself is not allowed');
      }
    }
    // Plain sources land in the folder under their own names: two with one name would land on one
    // destination, and the first moved would be overwritten by the second, its source already gone.
    const named = new Map<string, string>();
    for (const [i, s] of sources.entries()) {
      if (!destination.folder || isPattern(s.path, s.literal)) continue;
      const name = s.path.slice(s.path.lastIndexOf('/') + 1);
      const earlier = named.get(name);
      if (earlier !== undefined) {
        throw invalid(
          `"from" names two files called "${name}" (${earlier} and ${items[i]}): both would land on ${to}${name}; move them in two requests or to two folders`,
        );
      }
      named.set(name, items[i] as string);
    }
    return { sources, destination };
  }

  private async removalPaths(caller: Caller, path: string | string[], literal: boolean): Promise<Resolved[]> {
    const out: Resolved[] = [];
    const pause = slicer();
    for (const item of list(path, 'path')) {
      await pause();
      const resolved = await this.resolvePath(caller, item, 'path');
      this.checkSource(resolved, 'path', literal);
      out.push(resolved);
    }
    return out;
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

  /** What /remove would remove now, streamed; nothing is removed. Entries carry the location-relative path. */
  async preview(
    caller: Caller,
    path: string | string[],
    literal = false,
    filterInput?: FilterInput,
  ): Promise<AsyncIterable<Entry>> {
    const paths = await this.removalPaths(caller, path, literal);
    const rows = new Map(paths.map((p) => [p.row.id, p.row]));
    const refs: ObjectRef[] = paths.map((p) => ({
      location_id: p.row.id,
      path: p.path,
      ...(literal ? { literal: true } : {}),
    }));
    const filter = compileFilter(this.checkFilter(filterInput, refs));
    const expanded = await this.expandRefs(refs, rows, filter).head();
    return {
      async *[Symbol.asyncIterator]() {
        for await (const { entry } of expanded) yield entry;
      },
    };
  }

  /**
   * The objects `refs` name, in order, as the worker expands them. head() expands the first before
   * answering, so that a missing file is a 404 rather than a cut answer.
   */
  private expandRefs(refs: ObjectRef[], rows: Map<string, LocationRow>, filter?: Filter) {
    const storage = this.storage;
    return {
      async head(): Promise<AsyncIterable<{ ref: ObjectRef; entry: Entry }>> {
        const first = refs[0] as ObjectRef;
        const firstStore = storage.open(rows.get(first.location_id) as LocationRow);
        const firstIterator = expandSources(firstStore, first.path, undefined, first.literal, filter)[
          Symbol.asyncIterator
        ]();
        let head: IteratorResult<Entry>;
        try {
          head = await firstIterator.next();
        } catch (err) {
          await firstStore.close();
          throw err;
        }
        return {
          async *[Symbol.asyncIterator]() {
            try {
              if (!head.done) {
                yield { ref: first, entry: head.value };
                while (true) {
                  const next = await firstIterator.next();
                  if (next.done) break;
                  yield { ref: first, entry: next.value };
                }
              }
            } finally {
              await firstStore.close();
            }
            for (const ref of refs.slice(1)) {
              const store = storage.open(rows.get(ref.location_id) as LocationRow);
              try {
                for await (const entry of expandSources(store, ref.path, undefined, ref.literal, filter))
                  yield { ref, entry };
              } finally {
                await store.close();
              }
            }
          },
        };
      },
    };
  }

  async pull(caller: Caller, from: string | string[], to: string, audit: AuditContext): Promise<Queued> {
    const { workspaceId } = caller;
    const urls = list(from, 'from');
    for (const url of urls) await checkPullHost(checkPullUrl(url), this.egress);
    const destination = await this.destination(caller, to, urls.length > 1);
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

/**
 * A transfer over several objects and the job that runs it, in the caller's transaction, so neither
 * exists without the other; `planId` when the job runs a plan (docs/api.md, "Plans").
 */
export async function queueWithJob(
  trx: Queryable,
  workspaceId: string,
  spec: TransferSpec,
  given: transfers.Given,
  now: number,
  planId?: string,
  id?: string,
): Promise<{ queued: Queued; jobId: string }> {
  const queued = await transfers.enqueue(trx, workspaceId, spec, now, given, true, undefined, id);
  // The job's own source and destination only say where it works; each object carries its own.
  const refs = jobRefs(spec);
  const { job_id } = await jobs.create(
    trx,
    {
      id: newId(),
      workspaceId,
      source: jobSource.encode(refs.source),
      destination: jobDestination.encode(refs.destination),
      overwrite: 'always',
      manifest: undefined,
      transferId: queued.id,
      touches: specLocations(spec),
      ...(planId === undefined ? {} : { planId }),
    },
    now,
  );
  return { queued, jobId: job_id };
}

/** Where a job that runs a transfer works, as a job's source and destination (first source; destination). */
function jobRefs(spec: TransferSpec): { source: ObjectRef; destination: ObjectRef } {
  const strip = (ref: ObjectRef) => ({ location_id: ref.location_id, path: ref.path });
  switch (spec.kind) {
    case 'copy':
      return { source: spec.source, destination: spec.destination };
    case 'move':
      return { source: strip(spec.sources[0] as ObjectRef), destination: strip(spec.destination) };
    case 'remove':
      return { source: strip(spec.paths[0] as ObjectRef), destination: strip(spec.paths[0] as ObjectRef) };
    case 'pull':
      return { source: strip(spec.destination), destination: strip(spec.destination) };
  }
}
