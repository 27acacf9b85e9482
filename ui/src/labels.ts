// Location labels where ferry's answers carry location ids: a transfer's `from` and `to` as the console
// gave them (`<id>:<path>`), a job's `from.id`, a schedule's action, an audit event's target. The labels
// come from the console's own list of locations (GET /v1/locations), read when a page that shows ids
// opens and kept for the tab, so a row reads "photos:my-bucket/2026/" and not a UUID. The id of a
// location the key cannot see, or of one deleted since, stays as it is.
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { can } from './scopes.js';

const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

let known = new Map<string, string>();

/** `text` with each location id the console knows written as that location's label. */
export function labelled(text: string): string {
  return known.size === 0 ? text : text.replace(UUIDS, (id) => known.get(id.toLowerCase()) ?? id);
}

/** The label of the location `id`, or the id when it is not known. */
export const labelOf = (id: string): string => known.get(id.toLowerCase()) ?? id;

/**
 * Reads the locations (once a page: a label renamed since shows at the next page) and renders again when
 * they are in; answers `labelled`. A key without the read scope, or a failed read, keeps the ids.
 */
export function useLocationLabels(): (text: string) => string {
  const [, setRead] = useState(0);
  useEffect(() => {
    if (!can('read')) return;
    let stop = false;
    api('GET', '/v1/locations').then(
      (list) => {
        known = new Map(list.map((l) => [l.id.toLowerCase(), l.label]));
        if (!stop) setRead((n) => n + 1);
      },
      () => {
        // The ids stay; the page says what failed where it reads what it needs.
      },
    );
    return () => {
      stop = true;
    };
  }, []);
  return labelled;
}
