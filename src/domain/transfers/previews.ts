// What a move or a remove would do now, streamed, with nothing moved or removed (docs/api.md, "Move,
// remove, pull"): the same expansion of sources and naming of destinations as the worker's
// (expandSources; destinationPath of src/engine/run-transfer.ts).

import type { LocationRow } from '../../db/schema.js';
import { destinationPath } from '../../engine/run-transfer.js';
import type { ObjectRef } from '../../lifecycle/specs.js';
import { compileFilter, type Filter, type FilterInput } from '../../objects/filter.js';
import { expandSources } from '../../objects/patterns.js';
import type { Entry } from '../../stores/contract.js';
import type { Caller } from '../caller.js';
import type { Locations } from '../locations/locations.js';
import type { Storage } from '../storage.js';
import type { OperationPaths } from './paths.js';

export class Previews {
  constructor(
    private readonly paths: OperationPaths,
    private readonly locations: Locations,
    private readonly storage: Storage,
  ) {}

  /**
   * What /move would move now and where, streamed; nothing is moved. The same expansion and
   * destination naming as the worker (expandSources, destinationPath of src/engine/run-transfer.ts).
   */
  async move(
    caller: Caller,
    from: string | string[],
    to: string,
    literal = false,
    filterInput?: FilterInput,
  ): Promise<AsyncIterable<{ from: string; to: string }>> {
    const { sources, destination } = await this.paths.movePaths(caller, from, to, literal);
    const filter = compileFilter(this.paths.checkFilter(filterInput, sources));
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

  /** What /remove would remove now, streamed; nothing is removed. Entries carry the location-relative path. */
  async remove(
    caller: Caller,
    path: string | string[],
    literal = false,
    filterInput?: FilterInput,
  ): Promise<AsyncIterable<Entry>> {
    const paths = await this.paths.removalPaths(caller, path, literal);
    const rows = new Map(paths.map((p) => [p.row.id, p.row]));
    const refs: ObjectRef[] = paths.map((p) => ({
      location_id: p.row.id,
      path: p.path,
      ...(literal ? { literal: true } : {}),
    }));
    const filter = compileFilter(this.paths.checkFilter(filterInput, refs));
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
}
