// The console's one table and its one way of paging. A table has a caption (for screen readers unless
// shown), a header row, and a row per item whose first cell names it; on a narrow screen each other
// cell says its column's name (data-label, styles.css). A list the API answers a page at a time
// (docs/api.md, "Polling": `limit`, `cursor`, `next_cursor`) shows its first page, and each press of
// its button adds the next page under the rows shown.
import type { ComponentChildren } from 'preact';
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { message, useLoad } from './common.js';

export interface Column<T> {
  /** The header, and the cell's name on a narrow screen. */
  name: string;
  cell: (row: T) => ComponentChildren;
  /** The header is for screen readers only (a row's buttons). */
  unnamed?: boolean;
  /** The name a narrow screen shows beside the cell, when not `name` ('' for none). */
  label?: string;
  class?: string;
  /** The cell's tooltip. */
  title?: (row: T) => string | undefined;
}

/**
 * The column of a row's buttons: its header for screen readers only. `label: ''` leaves the narrow
 * screen's "Actions" out.
 */
export function actions<T>(cell: (row: T) => ComponentChildren, label?: ''): Column<T> {
  return {
    name: 'Actions',
    unnamed: true,
    class: 'actions',
    cell,
    ...(label === undefined ? {} : { label }),
  };
}

export function Table<T>({
  caption,
  captionShown = false,
  class: className,
  columns,
  rows,
  rowKey,
  after,
}: {
  caption: string;
  captionShown?: boolean;
  class?: string;
  columns: Column<T>[];
  rows: readonly T[];
  rowKey: (row: T, index: number) => string;
  /** What follows a row in rows of its own (a share's downloads, opened under it). */
  after?: (row: T) => ComponentChildren;
}) {
  const [head, ...rest] = columns;
  return (
    <table class={className}>
      <caption class={captionShown ? undefined : 'sr-only'}>{caption}</caption>
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.name} scope="col">
              {c.unnamed ? <span class="sr-only">{c.name}</span> : c.name}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row, i) => (
          <Fragment key={rowKey(row, i)}>
            <tr>
              {head && (
                <th scope="row" class={head.class} title={head.title?.(row)}>
                  {head.cell(row)}
                </th>
              )}
              {rest.map((c) => (
                <td key={c.name} data-label={c.label ?? c.name} class={c.class} title={c.title?.(row)}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
            {after?.(row)}
          </Fragment>
        ))}
      </tbody>
    </table>
  );
}

/** One page of a list as the API answers it, under the name of its items. */
export interface Page<T> {
  items: T[];
  next_cursor?: string | undefined;
}

/**
 * A list read a page at a time: the first page, loaded as useLoad does (again when `deps` change, and
 * on reload()), and the pages more() adds under it. The added pages belong to the first page they
 * followed, so a reload, or a filter changed since, shows the first page alone again and an answer for
 * an earlier one is never shown.
 */
export function usePages<T>(read: (cursor?: string) => Promise<Page<T>>, deps: unknown[]) {
  const first = useLoad(() => read(), deps);
  const [older, setOlder] = useState<{ after?: Page<T>; items: T[]; cursor?: string | undefined }>({
    items: [],
  });
  const [busy, setBusy] = useState(false);
  const base = first.data;
  const mine = base !== undefined && older.after === base;
  const cursor = mine ? older.cursor : base?.next_cursor;
  const more = async () => {
    if (!cursor || base === undefined) return;
    setBusy(true);
    try {
      const page = await read(cursor);
      setOlder((o) => ({
        after: base,
        items: [...(o.after === base ? o.items : []), ...page.items],
        cursor: page.next_cursor,
      }));
    } catch (err) {
      first.setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  return {
    ...first,
    rows: base === undefined ? [] : [...base.items, ...(mine ? older.items : [])],
    /** Reads the next page; undefined when the last page is shown. */
    more: cursor ? () => void more() : undefined,
    busy,
  };
}

/** The button that adds the next page, while there is one. */
export function More({
  pages,
  children,
}: {
  pages: { more?: (() => void) | undefined; busy: boolean };
  children: ComponentChildren;
}) {
  return pages.more ? (
    <button type="button" disabled={pages.busy} onClick={pages.more}>
      {children}
    </button>
  ) : null;
}
