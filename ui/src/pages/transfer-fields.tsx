// The fields of a bulk copy, a sync or a verify (docs/api.md, "Sync", "Verify", "Filters", "Bandwidth"),
// shared by the Sync page, the Schedules page's form and Browse's copy and verify panels: a location
// picked from a list with a path in it, the sync's compare and delete options, the copy's overwrite mode
// or the verify's mode, the filter and the bandwidth limit; and the request body they make.
import type { BodyOf, Filter, LocationSummary } from '../../../src/api/routes.js';
import { visibleName } from '../format.js';
import { can } from '../scopes.js';
import { scopesWord } from './common.js';

/** A location as the pickers list it (from GET /v1/locations). */
export type Loc = Pick<LocationSummary, 'id' | 'label'>;

/**
 * A location chosen from `locations` and a path typed beside it, as `<id>:<path>` targets take them.
 * `id` names the two fields (`<id>-location`, `<id>-path`) for their labels.
 */
export function LocationPath({
  id,
  what,
  pathLabel,
  locations,
  location,
  path,
  onLocation,
  onPath,
  placeholder,
}: {
  id: string;
  /** "Destination", "Source". */
  what: string;
  /** The path field's label ("Destination path", "Source folder (ending in /)"). */
  pathLabel: string;
  locations: Loc[];
  location: string;
  path: string;
  onLocation: (id: string) => void;
  onPath: (path: string) => void;
  /** An example of the path, shown while the field is empty. */
  placeholder?: string | undefined;
}) {
  return (
    <>
      <label for={`${id}-location`}>{what} location</label>
      <select
        id={`${id}-location`}
        value={location}
        required
        onChange={(e) => onLocation(e.currentTarget.value)}
      >
        {locations.map((l) => (
          <option key={l.id} value={l.id}>
            {visibleName(l.label)}
          </option>
        ))}
      </select>
      <label for={`${id}-path`}>{pathLabel}</label>
      <input
        id={`${id}-path`}
        required
        value={path}
        placeholder={placeholder}
        onInput={(e) => onPath(e.currentTarget.value)}
      />
    </>
  );
}

export type ActionKind = 'copy' | 'sync' | 'verify';

/** The body each kind is sent with: POST /v1/copy, /v1/sync or /v1/verify (a schedule's action too). */
export interface ActionBodies {
  copy: BodyOf<'POST', '/v1/copy'>;
  sync: BodyOf<'POST', '/v1/sync'>;
  verify: BodyOf<'POST', '/v1/verify'>;
}

/** A verify's modes (docs/api.md, "Verify"), in words. */
export const VERIFY_MODE_WORDS: ReadonlyArray<[string, string]> = [
  ['checksum', 'Checksum (reads the bytes where the two sides report no hash in common)'],
  ['download', 'Read and hash both sides'],
  ['size', 'Size only'],
];

/** A verify's mode field: `id` names it for its label. */
export function VerifyMode({
  id,
  value,
  onChange,
}: {
  id: string;
  value: string;
  onChange: (mode: string) => void;
}) {
  return (
    <>
      <label for={id}>Compare by</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {VERIFY_MODE_WORDS.map(([mode, words]) => (
          <option key={mode} value={mode}>
            {words}
          </option>
        ))}
      </select>
    </>
  );
}

/** What the form holds, as typed (numbers and times as text until the body is made). */
export interface TransferValues {
  fromLocation: string;
  fromPath: string;
  toLocation: string;
  toPath: string;
  compare: string;
  /** A verify's mode. */
  mode: string;
  delete: boolean;
  maxDelete: string;
  overwrite: string;
  include: string;
  exclude: string;
  minSize: string;
  maxSize: string;
  after: string;
  before: string;
  bandwidth: string;
}

export const EMPTY_TRANSFER: TransferValues = {
  fromLocation: '',
  fromPath: '',
  toLocation: '',
  toPath: '',
  compare: 'size-modtime',
  mode: 'checksum',
  delete: false,
  maxDelete: '',
  overwrite: 'always',
  include: '',
  exclude: '',
  minSize: '',
  maxSize: '',
  after: '',
  before: '',
  bandwidth: '',
};

/** A prefix target: the folder's path ends in "/" (docs/api.md, "Copy"). */
const folder = (p: string) => (p === '' || p.endsWith('/') ? p : `${p}/`);
/** One glob a line; blank lines are none. */
const globs = (text: string) =>
  text
    .split(/\r?\n/)
    .map((g) => g.trim())
    .filter(Boolean);
const integer = (text: string) => (text.trim() === '' ? undefined : Number(text));
/** A datetime-local value in the browser's zone as RFC 3339. */
const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);

/**
 * The body of POST /v1/sync, POST /v1/verify or of a bulk POST /v1/copy from the form's values: only the
 * options given, so ferry's defaults hold for the rest (a verify has no bandwidth limit). Numbers that are not numbers go as typed, for ferry to name
 * the field that is wrong.
 */
export function transferBody<K extends ActionKind>(v: TransferValues, kind: K): ActionBodies[K] {
  const include = globs(v.include);
  const exclude = globs(v.exclude);
  const minSize = integer(v.minSize);
  const maxSize = integer(v.maxSize);
  const after = instant(v.after);
  const before = instant(v.before);
  const maxDelete = integer(v.maxDelete);
  const bandwidth = integer(v.bandwidth);
  const filter: Filter = {
    ...(include.length ? { include } : {}),
    ...(exclude.length ? { exclude } : {}),
    ...(minSize !== undefined ? { min_size: minSize } : {}),
    ...(maxSize !== undefined ? { max_size: maxSize } : {}),
    ...(after !== undefined ? { modified_after: after } : {}),
    ...(before !== undefined ? { modified_before: before } : {}),
  };
  const from = `${v.fromLocation}:${folder(v.fromPath)}`;
  const to = `${v.toLocation}:${folder(v.toPath)}`;
  // The modes are picked from selects that offer only the API's words; tsc cannot narrow K by kind.
  if (kind === 'verify') {
    const body: ActionBodies['verify'] = {
      from,
      to,
      mode: v.mode as NonNullable<ActionBodies['verify']['mode']>,
      ...(Object.keys(filter).length ? { filter } : {}),
    };
    return body as ActionBodies[K];
  }
  const body: ActionBodies['copy'] | ActionBodies['sync'] = {
    from,
    to,
    ...(kind === 'sync'
      ? {
          compare: v.compare as NonNullable<ActionBodies['sync']['compare']>,
          ...(v.delete
            ? { delete: true, ...(maxDelete !== undefined ? { max_delete: maxDelete } : {}) }
            : {}),
        }
      : { overwrite: v.overwrite as NonNullable<ActionBodies['copy']['overwrite']> }),
    ...(Object.keys(filter).length ? { filter } : {}),
    ...(bandwidth !== undefined ? { bandwidth_limit: bandwidth } : {}),
  };
  return body as ActionBodies[K];
}

/**
 * The form's fields (inside the caller's `<form class="grid">`): source and destination, then the
 * options of `kind`, the filter and the bandwidth limit. `id` keeps two forms' fields apart.
 */
export function TransferFields({
  id,
  kind,
  locations,
  values: v,
  onChange,
}: {
  id: string;
  kind: ActionKind;
  locations: Loc[];
  values: TransferValues;
  onChange: (v: TransferValues) => void;
}) {
  const set = (patch: Partial<TransferValues>) => onChange({ ...v, ...patch });
  const text = (key: keyof TransferValues, label: string, props: Record<string, unknown> = {}) => (
    <>
      <label for={`${id}-${key}`}>{label}</label>
      <input
        id={`${id}-${key}`}
        value={String(v[key])}
        onInput={(e) => set({ [key]: e.currentTarget.value })}
        {...props}
      />
    </>
  );
  const lines = (key: 'include' | 'exclude', label: string) => (
    <>
      <label for={`${id}-${key}`}>{label}</label>
      <textarea
        id={`${id}-${key}`}
        rows={2}
        value={v[key]}
        onInput={(e) => set({ [key]: e.currentTarget.value })}
      />
    </>
  );
  const bytesField = { type: 'number', min: 0, step: 1, inputMode: 'numeric' };
  return (
    <>
      <LocationPath
        id={`${id}-from`}
        what="Source"
        pathLabel="Source folder"
        locations={locations}
        location={v.fromLocation}
        path={v.fromPath}
        onLocation={(fromLocation) => set({ fromLocation })}
        onPath={(fromPath) => set({ fromPath })}
      />
      <LocationPath
        id={`${id}-to`}
        what="Destination"
        pathLabel="Destination folder"
        locations={locations}
        location={v.toLocation}
        path={v.toPath}
        onLocation={(toLocation) => set({ toLocation })}
        onPath={(toPath) => set({ toPath })}
      />
      {kind === 'verify' ? (
        <VerifyMode id={`${id}-mode`} value={v.mode} onChange={(mode) => set({ mode })} />
      ) : kind === 'sync' ? (
        <>
          <label for={`${id}-compare`}>Compare by</label>
          <select
            id={`${id}-compare`}
            value={v.compare}
            onChange={(e) => set({ compare: e.currentTarget.value })}
          >
            <option value="size-modtime">Size and modification time</option>
            <option value="checksum">Checksum</option>
            <option value="size">Size only</option>
          </select>
          {/* A sync that deletes needs the remove scope as well as transfer (docs/api.md, "Scopes"). */}
          {can('remove') ? (
            <>
              <label for={`${id}-delete`}>Delete at the destination what the source lacks</label>
              <input
                id={`${id}-delete`}
                type="checkbox"
                checked={v.delete}
                onChange={(e) => set({ delete: e.currentTarget.checked })}
              />
              {v.delete &&
                text('maxDelete', 'Delete at most (empty: half the destination, at most 1000)', bytesField)}
            </>
          ) : (
            <>
              <span>Delete at the destination what the source lacks</span>
              <p class="small needs-scope">
                Not offered: it needs an API key with the remove scope (this key can: {scopesWord()}).
              </p>
            </>
          )}
        </>
      ) : (
        <>
          <label for={`${id}-overwrite`}>Objects already there</label>
          <select
            id={`${id}-overwrite`}
            value={v.overwrite}
            onChange={(e) => set({ overwrite: e.currentTarget.value })}
          >
            <option value="always">Overwrite</option>
            <option value="if-missing">Skip</option>
          </select>
        </>
      )}
      {lines('include', 'Include (globs, one a line)')}
      {lines('exclude', 'Exclude (globs, one a line)')}
      {text('minSize', 'Minimum size (bytes)', bytesField)}
      {text('maxSize', 'Maximum size (bytes)', bytesField)}
      {text('after', 'Modified after', { type: 'datetime-local' })}
      {text('before', 'Modified before', { type: 'datetime-local' })}
      {kind !== 'verify' && text('bandwidth', 'Bandwidth limit (bytes/s, empty: none)', bytesField)}
    </>
  );
}
