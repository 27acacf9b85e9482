// A location's buckets and folders (docs/api.md, "Listing objects") as a file manager: a page of 50
// entries at a time, filtered by name; upload into the folder shown (drag and drop or the file input;
// a file whose name is already there is replaced only once the person says so) and download, with
// progress and cancel (../files.ts); a new bucket (on a bucket store's top level)
// or folder; and, on one entry or a selection, copy, move, remove, share and send, and on a folder,
// verify (./browse-actions.tsx).
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Entry, Listing } from '../../../src/api/routes.js';
import { ApiError, api } from '../api.js';
import { files, getFile, putFile, type Task } from '../files.js';
import { bytes, time, visibleName } from '../format.js';
import { can, type Scope } from '../scopes.js';
import { type Action, ActionPanel, entriesWord, type Kind } from './browse-actions.js';
import { Alert, message, Notice, ProgressBar, useLoad } from './common.js';

const PAGE = 50;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Folders opened with New folder in this tab, as `location/path`. A folder exists on a store only once
 * something is written into it (src/stores/contract.ts), so until then its listing is 404: such a
 * folder is shown empty, ready for an upload.
 */
const newFolders = new Set<string>();

function href(location: string, path: string): string {
  return `#browse/${encodeURIComponent(location)}${path ? `/${path.split('/').map(encodeURIComponent).join('/')}` : ''}`;
}

/** Each action on an entry: its verb, where it applies, and the scope a key needs for it (docs/api.md, "Scopes"). */
const ALL_ROW_ACTIONS: [Kind, string, (e: Entry, inFolder: boolean) => boolean, Scope][] = [
  ['copy', 'Copy', (_, inFolder) => inFolder, 'transfer'],
  ['move', 'Move', (_, inFolder) => inFolder, 'transfer'],
  ['remove', 'Remove', (_, inFolder) => inFolder, 'remove'],
  ['share', 'Share', (e) => !e.isDir, 'share'],
  ['send', 'Send', (e) => !e.isDir, 'share'],
  // A folder (or a bucket) compared with another, changing nothing (docs/api.md, "Verify").
  ['verify', 'Verify', (e) => e.isDir, 'read'],
];

/** The actions that take one entry only, never a selection. */
const ONE_ONLY: ReadonlySet<Kind> = new Set(['send', 'verify']);

export function Browser({ location, path }: { location: string; path: string }) {
  const locations = useLoad(() => api('GET', '/v1/locations'), []);
  const isNew = newFolders.has(`${location}/${path}`);
  const listing = useLoad(async (): Promise<Listing> => {
    try {
      return await api('POST', '/v1/list', {
        body: { ...(UUID.test(location) ? { id: location } : { name: location }), path },
      });
    } catch (err) {
      if (isNew && err instanceof ApiError && err.status === 404) return { entries: [] };
      throw err;
    }
  }, [location, path]);
  const [page, setPage] = useState(0);
  const [filter, setFilter] = useState('');
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [action, setAction] = useState<Action | undefined>(undefined);
  // Each opened action is a new panel, its fields fresh.
  const [opened, setOpened] = useState(0);
  const [dragging, setDragging] = useState(false);
  // Files whose names the folder already has, waiting for Replace or Keep (a PUT replaces silently).
  const [clashes, setClashes] = useState<File[]>([]);
  const [, setTick] = useState(0);
  // Progress re-renders; a finished upload into this folder shows in its listing.
  useEffect(
    () =>
      files.listen((ended) => {
        setTick((n) => n + 1);
        if (ended?.folder === `${location}/${path}`) listing.reload();
      }),
    [location, path, listing.reload],
  );
  const entries = useMemo(
    () =>
      [...(listing.data?.entries ?? [])].sort(
        (a, b) => Number(b.isDir) - Number(a.isDir) || a.name.localeCompare(b.name),
      ),
    [listing.data],
  );
  const matching = useMemo(() => {
    const words = filter.trim().toLowerCase();
    return words ? entries.filter((e) => e.name.toLowerCase().includes(words)) : entries;
  }, [entries, filter]);
  const label = locations.data?.find((l) => l.id === location)?.label ?? location;
  // A new folder starts at its first page, unfiltered, with nothing selected or open.
  useEffect(() => {
    setPage(0);
    setFilter('');
    setSelected(new Set());
    setAction(undefined);
    setClashes([]);
  }, [location, path]);
  const crumbs = path ? path.split('/') : [];
  const shown = matching.slice(page * PAGE, (page + 1) * PAGE);
  const pages = Math.max(1, Math.ceil(matching.length / PAGE));
  // A bucket store's top level lists buckets: nothing is uploaded or selected there.
  const bucketTop = path === '' && listing.data?.hint !== undefined;
  // Uploads (and the new folder they go into) need the transfer scope.
  const canWrite = listing.data !== undefined && !bucketTop && can('transfer');
  const inFolder = path !== '';
  // The actions this key may start (scopes.ts): a selection only where one of them takes it.
  const rowActions = ALL_ROW_ACTIONS.filter(([, , , scope]) => can(scope));
  const selectable = inFolder && rowActions.some(([kind]) => !ONE_ONLY.has(kind));
  const chosen = entries.filter((e) => selected.has(e.path));
  const allShown = shown.length > 0 && shown.every((e) => selected.has(e.path));
  const toggle = (paths: string[], on: boolean) => {
    const next = new Set(selected);
    for (const p of paths) on ? next.add(p) : next.delete(p);
    setSelected(next);
  };
  const [dropError, setDropError] = useState<string | undefined>(undefined);
  const send = (list: File[]) => {
    const into = `${label}/${path}`;
    for (const file of list)
      files.add(
        'upload',
        file.name,
        into,
        (progress, signal) =>
          putFile(location, path ? `${path}/${file.name}` : file.name, file, progress, signal),
        `${location}/${path}`,
      );
  };
  const upload = (list: File[]) => {
    const taken = new Set(entries.filter((e) => !e.isDir).map((e) => e.name));
    send(list.filter((f) => !taken.has(f.name)));
    setClashes(list.filter((f) => taken.has(f.name)));
  };
  // Dropped files anywhere on the page never make the browser open them instead of the console.
  const drop = {
    onDragOver: (e: DragEvent) => {
      e.preventDefault();
      setDragging(canWrite);
    },
    onDragLeave: () => setDragging(false),
    onDrop: (e: DragEvent) => {
      e.preventDefault();
      setDragging(false);
      if (!canWrite || !e.dataTransfer) return;
      // A dropped folder comes as a File that cannot be read: say so rather than fail its upload.
      const items = [...e.dataTransfer.items].filter((i) => i.kind === 'file');
      const folders = items.filter((i) => i.webkitGetAsEntry?.()?.isDirectory).length;
      setDropError(
        folders
          ? `${folders} folder${folders === 1 ? ' was' : 's were'} not uploaded: drop the files inside.`
          : undefined,
      );
      upload(items.filter((i) => !i.webkitGetAsEntry?.()?.isDirectory).flatMap((i) => i.getAsFile() ?? []));
    },
  };
  const open = (kind: Kind, list: Entry[]) => {
    setAction({ kind, entries: list });
    setOpened(opened + 1);
    // Keyboard and screen-reader users land in the panel that opened.
    setTimeout(() => document.getElementById('h-action')?.focus());
  };
  return (
    <section aria-labelledby="h-browse" class={dragging ? 'browse dropping' : 'browse'} {...drop}>
      <h1 id="h-browse">Browse {visibleName(label)}</h1>
      <nav aria-label="Breadcrumb" class="crumbs">
        <ol>
          <li>
            <a href={href(location, '')}>{visibleName(label)}</a>
          </li>
          {crumbs.map((c, i) => (
            <li key={crumbs.slice(0, i + 1).join('/')}>
              <a
                href={href(location, crumbs.slice(0, i + 1).join('/'))}
                aria-current={i === crumbs.length - 1 ? 'page' : undefined}
              >
                {visibleName(c)}
              </a>
            </li>
          ))}
        </ol>
      </nav>
      <Alert error={listing.error} />
      {listing.data?.hint && <p class="small">{listing.data.hint}</p>}
      {bucketTop && can('admin') && <NewBucket location={location} onMade={() => listing.reload()} />}
      {canWrite && (
        <div class="row">
          <label for="upload-files">Upload files</label>
          <input
            id="upload-files"
            type="file"
            multiple
            onChange={(e) => {
              upload([...(e.currentTarget.files ?? [])]);
              // The same file chosen again (after Keep) is a change too.
              e.currentTarget.value = '';
            }}
          />
          <NewFolder location={location} path={path} />
          <span class="small">
            or drop files on this page to upload them into {visibleName(path || label)}/.
          </span>
        </div>
      )}
      {isNew && entries.length === 0 && listing.data && (
        <Notice>
          This folder is new and empty: it comes into being on the store when the first file is uploaded into
          it.
        </Notice>
      )}
      <Alert error={dropError} />
      {clashes.length > 0 && (
        <Replace
          files={clashes}
          folder={visibleName(path || label)}
          onReplace={() => {
            send(clashes);
            setClashes([]);
          }}
          onKeep={() => setClashes([])}
        />
      )}
      <Tasks />
      {listing.loading && <p>Loading…</p>}
      {action && (
        <ActionPanel
          key={opened}
          action={action}
          location={location}
          folder={path}
          locations={locations.data ?? []}
          onDone={() => {
            setAction(undefined);
            listing.reload();
          }}
        />
      )}
      {entries.length > 0 && (
        <div class="row">
          <label for="filter">Filter by name</label>
          <input
            id="filter"
            type="search"
            autocomplete="off"
            value={filter}
            onInput={(e) => {
              setFilter(e.currentTarget.value);
              setPage(0);
            }}
          />
          <span role="status">
            {filter.trim()
              ? `${matching.length} of ${entriesWord(entries.length)} ${matching.length === 1 ? 'matches' : 'match'}.`
              : ''}
          </span>
        </div>
      )}
      {selectable && (
        // Outside the table: on a phone the table's head is not shown (its rows become cards).
        <label class="row">
          <input
            type="checkbox"
            disabled={shown.length === 0}
            checked={allShown}
            onChange={(e) =>
              toggle(
                shown.map((x) => x.path),
                e.currentTarget.checked,
              )
            }
          />
          Select all shown
        </label>
      )}
      {chosen.length > 0 && (
        <fieldset class="row">
          <legend>{entriesWord(chosen.length)} selected</legend>
          {rowActions
            .filter(([kind]) => !ONE_ONLY.has(kind))
            .map(
              ([kind, verb]) =>
                chosen.some((e) => rowActions.find(([k]) => k === kind)?.[2](e, inFolder)) && (
                  <button
                    type="button"
                    key={kind}
                    class={kind === 'remove' ? 'danger' : undefined}
                    onClick={() => open(kind, chosen)}
                  >
                    {verb} selected
                  </button>
                ),
            )}
          <button type="button" onClick={() => setSelected(new Set())}>
            Clear selection
          </button>
        </fieldset>
      )}
      <table>
        <caption class="sr-only">Contents of {visibleName(path || label)}</caption>
        <thead>
          <tr>
            {selectable && (
              <th scope="col">
                <span class="sr-only">Selected</span>
              </th>
            )}
            <th scope="col">Name</th>
            <th scope="col">Size</th>
            <th scope="col">Modified</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {shown.map((e) => (
            <tr key={e.path}>
              {selectable && (
                <td data-label="Select" class="select">
                  <input
                    type="checkbox"
                    aria-label={`Select ${visibleName(e.name)}`}
                    checked={selected.has(e.path)}
                    onChange={(ev) => toggle([e.path], ev.currentTarget.checked)}
                  />
                </td>
              )}
              <th scope="row" class="name">
                {e.isDir ? <a href={href(location, e.path)}>{visibleName(e.name)}/</a> : visibleName(e.name)}
              </th>
              <td data-label="Size">{e.isDir ? '—' : bytes(e.size)}</td>
              <td data-label="Modified">{time(e.modTime)}</td>
              <td data-label="Actions" class="actions">
                {!e.isDir && (
                  <button
                    type="button"
                    aria-label={`Download ${visibleName(e.name)}`}
                    onClick={() =>
                      files.add('download', e.name, e.path, (progress, signal) =>
                        getFile(location, e.path, e.name, progress, signal),
                      )
                    }
                  >
                    Download
                  </button>
                )}
                {rowActions.map(
                  ([kind, verb, offered]) =>
                    offered(e, inFolder) && (
                      <button
                        type="button"
                        key={kind}
                        class={kind === 'remove' ? 'danger' : undefined}
                        aria-label={`${verb} ${visibleName(e.name)}`}
                        onClick={() => open(kind, [e])}
                      >
                        {verb}
                      </button>
                    ),
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {listing.data && entries.length > 0 && matching.length === 0 && (
        <p>No entry here matches the filter.</p>
      )}
      {pages > 1 && (
        <nav aria-label="Pages" class="row">
          <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <span>
            Page {page + 1} of {pages} ({entriesWord(matching.length)})
          </span>
          <button type="button" disabled={page + 1 >= pages} onClick={() => setPage(page + 1)}>
            Next
          </button>
        </nav>
      )}
    </section>
  );
}

/**
 * Asks before an upload replaces files of the same names (docs/console.md, "Browse"): Replace uploads
 * them, Keep (the focus, and Escape) leaves the files there as they are.
 */
function Replace({
  files: list,
  folder,
  onReplace,
  onKeep,
}: {
  files: File[];
  folder: string;
  onReplace: () => void;
  onKeep: () => void;
}) {
  const keep = useRef<HTMLButtonElement>(null);
  useEffect(() => keep.current?.focus(), []);
  const one = list.length === 1;
  const names = list.map((f) => visibleName(f.name)).join(', ');
  return (
    <div
      class="confirm"
      role="alertdialog"
      aria-labelledby="replace-question"
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          onKeep();
        }
      }}
    >
      <p id="replace-question">
        {one
          ? `${names} is already in ${folder}/. Replace it with the file you chose?`
          : `${list.length} of these files are already in ${folder}/: ${names}. Replace them with the files you chose?`}
      </p>
      <button type="button" class="danger" onClick={onReplace}>
        {one ? 'Replace' : `Replace ${list.length} files`}
      </button>
      <button ref={keep} type="button" onClick={onKeep}>
        {one ? 'Keep the file there' : 'Keep the files there'}
      </button>
    </div>
  );
}

/** Uploads and downloads of this tab, with their progress, each with Cancel while it has not ended. */
function Tasks() {
  if (files.tasks.length === 0) return null;
  const ended = files.tasks.some((t) => t.state !== 'waiting' && t.state !== 'running');
  return (
    <section aria-labelledby="h-tasks" class="panel">
      <h2 id="h-tasks">Uploads and downloads</h2>
      <ul class="jobs">
        {files.tasks.map((t) => (
          <TaskRow key={t.id} task={t} />
        ))}
      </ul>
      {ended && (
        <button type="button" onClick={() => files.clear()}>
          Clear finished
        </button>
      )}
    </section>
  );
}

function TaskRow({ task: t }: { task: Task }) {
  const what = `${t.kind === 'upload' ? 'Upload' : 'Download'} of ${visibleName(t.name)}`;
  const total = t.total ?? 0;
  const pct = t.state === 'done' ? 100 : total > 0 ? Math.min(100, Math.floor((t.loaded / total) * 100)) : 0;
  const words =
    t.state === 'waiting'
      ? 'waiting'
      : t.state === 'canceled'
        ? 'canceled'
        : t.state === 'done'
          ? `done, ${bytes(t.total ?? t.loaded)}`
          : t.state === 'failed'
            ? 'failed'
            : `${bytes(t.loaded)} of ${t.total === undefined ? '?' : bytes(t.total)} (${pct}%)`;
  return (
    <li class="job">
      <div>
        {what} {t.kind === 'upload' ? `into ${visibleName(t.where)}/` : ''}
      </div>
      <ProgressBar
        label={what}
        pct={pct}
        words={words}
        tone={t.state === 'failed' || t.state === 'canceled' ? t.state : ''}
      >
        {(t.state === 'waiting' || t.state === 'running') && (
          <button type="button" aria-label={`Cancel ${what.toLowerCase()}`} onClick={() => t.cancel()}>
            Cancel
          </button>
        )}
      </ProgressBar>
      {t.error && <p class="alert">{t.error}</p>}
    </li>
  );
}

/**
 * "New folder": asks a name and opens that folder, empty, for uploads. Nothing is written until then,
 * since a folder exists on a store only once something is written into it (docs/api.md, "Buckets").
 */
function NewFolder({ location, path }: { location: string; path: string }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = (e: Event) => {
    e.preventDefault();
    const n = name.trim();
    if (n.includes('/') || n === '.' || n === '..')
      return setError('A folder name cannot contain / and cannot be . or ..');
    const full = path ? `${path}/${n}` : n;
    newFolders.add(`${location}/${full}`);
    setOpen(false);
    setName('');
    window.location.hash = href(location, full);
  };
  return !open ? (
    <button type="button" onClick={() => setOpen(true)}>
      New folder
    </button>
  ) : (
    <form onSubmit={submit} class="row">
      <Alert error={error} />
      <label for="folder-name">Folder name</label>
      <input
        id="folder-name"
        required
        autocomplete="off"
        value={name}
        onInput={(e) => setName(e.currentTarget.value)}
      />
      <button type="submit">Open new folder</button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
      <span class="small">It exists once a file is uploaded into it.</span>
    </form>
  );
}

/**
 * "New bucket" on a bucket store's top level (the listing there carries a hint, and only there):
 * POST /v1/buckets, whose 400 names the provider's rule a name breaks (docs/api.md, "Buckets").
 */
function NewBucket({ location, onMade }: { location: string; onMade: () => void }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [made, setMade] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      setError(undefined);
      const entry = await api('POST', '/v1/buckets', {
        body: { ...(UUID.test(location) ? { id: location } : { name: location }), bucket: name },
      });
      setMade(entry.name);
      setName('');
      setOpen(false);
      onMade();
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <div class="row">
      {made && <Notice>Bucket {visibleName(made)} created.</Notice>}
      {!open ? (
        <button type="button" onClick={() => setOpen(true)}>
          New bucket
        </button>
      ) : (
        <section class="panel" aria-labelledby="h-new-bucket">
          <h2 id="h-new-bucket">New bucket</h2>
          <Alert error={error} />
          <form onSubmit={submit} class="grid">
            <label for="bucket-name">Bucket name</label>
            <input
              id="bucket-name"
              required
              autocomplete="off"
              spellcheck={false}
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
            />
            <button type="submit">Create bucket</button>
          </form>
          <button type="button" onClick={() => setOpen(false)}>
            Cancel
          </button>
        </section>
      )}
    </div>
  );
}
