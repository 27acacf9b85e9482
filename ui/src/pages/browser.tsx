// A location's buckets and folders (docs/api.md, "Listing objects"), a page at a time, and what can be
// started from there: a new bucket (on a bucket store's top level), a copy or bulk prefix copy
// (overwrite mode, manifest), a move, a remove after its preview, a share link (shown once).
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api.js';
import { bytes, time, visibleName } from '../format.js';
import { Alert, message, Notice, useLoad } from './common.js';

interface Entry {
  name: string;
  path: string;
  size: number;
  isDir: boolean;
  modTime?: string;
}
interface Loc {
  id: string;
  label: string;
}

const PAGE = 50;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Action = { kind: 'copy' | 'move' | 'remove' | 'share'; entry: Entry };

function href(location: string, path: string): string {
  return `#browse/${encodeURIComponent(location)}${path ? `/${path.split('/').map(encodeURIComponent).join('/')}` : ''}`;
}

export function Browser({ location, path }: { location: string; path: string }) {
  const locations = useLoad(() => api<Loc[]>('GET', '/v1/locations'), []);
  const listing = useLoad(
    () =>
      api<{ hint?: string; entries: Entry[] }>('POST', '/v1/list', {
        ...(UUID.test(location) ? { id: location } : { name: location }),
        path,
      }),
    [location, path],
  );
  const [page, setPage] = useState(0);
  const [action, setAction] = useState<Action | undefined>(undefined);
  const entries = useMemo(
    () =>
      [...(listing.data?.entries ?? [])].sort(
        (a, b) => Number(b.isDir) - Number(a.isDir) || a.name.localeCompare(b.name),
      ),
    [listing.data],
  );
  const label = locations.data?.find((l) => l.id === location)?.label ?? location;
  // A new folder starts at its first page.
  useEffect(() => setPage(0), [location, path]);
  const crumbs = path ? path.split('/') : [];
  const shown = entries.slice(page * PAGE, (page + 1) * PAGE);
  const pages = Math.max(1, Math.ceil(entries.length / PAGE));
  return (
    <section aria-labelledby="h-browse">
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
      {path === '' && listing.data?.hint !== undefined && (
        <NewBucket location={location} onMade={() => listing.reload()} />
      )}
      {listing.loading && <p>Loading…</p>}
      {action && (
        <ActionPanel
          action={action}
          location={location}
          locations={locations.data ?? []}
          onDone={() => {
            setAction(undefined);
            listing.reload();
          }}
        />
      )}
      <table>
        <caption class="sr-only">Contents of {visibleName(path || label)}</caption>
        <thead>
          <tr>
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
              <th scope="row">
                {e.isDir ? <a href={href(location, e.path)}>{visibleName(e.name)}/</a> : visibleName(e.name)}
              </th>
              <td>{e.isDir ? '—' : bytes(e.size)}</td>
              <td>{time(e.modTime)}</td>
              <td class="actions">
                {path !== '' && (
                  <>
                    <button
                      type="button"
                      aria-label={`Copy ${visibleName(e.name)}`}
                      onClick={() => setAction({ kind: 'copy', entry: e })}
                    >
                      Copy
                    </button>
                    <button
                      type="button"
                      aria-label={`Move ${visibleName(e.name)}`}
                      onClick={() => setAction({ kind: 'move', entry: e })}
                    >
                      Move
                    </button>
                    <button
                      type="button"
                      class="danger"
                      aria-label={`Remove ${visibleName(e.name)}`}
                      onClick={() => setAction({ kind: 'remove', entry: e })}
                    >
                      Remove
                    </button>
                  </>
                )}
                {!e.isDir && (
                  <button
                    type="button"
                    aria-label={`Share ${visibleName(e.name)}`}
                    onClick={() => setAction({ kind: 'share', entry: e })}
                  >
                    Share
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {pages > 1 && (
        <nav aria-label="Pages" class="row">
          <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <span>
            Page {page + 1} of {pages} ({entries.length} entries)
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
      const entry = await api<Entry>('POST', '/v1/buckets', {
        ...(UUID.test(location) ? { id: location } : { name: location }),
        bucket: name,
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

function ActionPanel({
  action,
  location,
  locations,
  onDone,
}: {
  action: Action;
  location: string;
  locations: Loc[];
  onDone: () => void;
}) {
  const { kind, entry } = action;
  const [dest, setDest] = useState(location);
  const [destPath, setDestPath] = useState(entry.isDir ? `${entry.path}-copy/` : `${entry.path}.copy`);
  const [overwrite, setOverwrite] = useState('always');
  const [manifest, setManifest] = useState<string[] | undefined>(undefined);
  const [preview, setPreview] = useState<Entry[] | undefined>(undefined);
  const [moves, setMoves] = useState<{ from: string; to: string }[] | undefined>(undefined);
  const [result, setResult] = useState<string | undefined>(undefined);
  const [link, setLink] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  // The one entry listed, never a pattern that also names its neighbours (docs/api.md, "Exact names"):
  // a file goes as an exact name; a folder as its path, glob characters escaped, with /** below it.
  const exact = entry.isDir
    ? { path: `${location}/${escapeGlob(entry.path)}/**` }
    : { path: `${location}/${entry.path}`, literal: true };
  const source = exact.path;
  const literal = exact.literal === true ? { literal: true } : {};
  const moveBody = () => ({
    from: source,
    to: `${dest}/${entry.isDir && !destPath.endsWith('/') ? `${destPath}/` : destPath}`,
    ...literal,
  });
  const run = async (work: () => Promise<void>) => {
    try {
      setError(undefined);
      await work();
    } catch (err) {
      setError(message(err));
    }
  };
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      if (kind === 'copy') {
        const bulk = entry.isDir;
        const to = bulk && !destPath.endsWith('/') ? `${destPath}/` : destPath;
        const r = await api<{ id?: string; job_id?: string }>('POST', '/v1/copy', {
          from: `${location}:${entry.path}${bulk ? '/' : ''}`,
          to: `${dest}:${to}`,
          ...(bulk ? { overwrite, ...(manifest ? { manifest } : {}) } : {}),
        });
        setResult(bulk ? `Bulk copy started (job ${r.job_id}).` : `Copy started (transfer ${r.id}).`);
      } else if (kind === 'move') {
        // First what would move and where (POST /move/preview); the move runs on confirm.
        setMoves(
          (await api<{ entries: { from: string; to: string }[] }>('POST', '/move/preview', moveBody()))
            .entries,
        );
      } else if (kind === 'share') {
        const r = await api<{ url: string }>('POST', '/share', { file: source, ...literal });
        setLink(r.url);
      }
    });
  };
  const loadPreview = () =>
    run(async () =>
      setPreview(
        (await api<{ entries: Entry[] }>('POST', '/remove/preview', { path: source, ...literal })).entries,
      ),
    );
  const confirmMove = () =>
    run(async () => {
      const r = await api<{ id: string }>('POST', '/move', moveBody());
      setResult(`Move started (transfer ${r.id}).`);
      setMoves(undefined);
    });
  const confirmRemove = () =>
    run(async () => {
      const r = await api<{ id: string }>('POST', '/remove', { path: source, ...literal });
      setResult(`Removal started (transfer ${r.id}).`);
      setPreview(undefined);
    });
  const title = `${kind[0]?.toUpperCase()}${kind.slice(1)} ${visibleName(entry.path)}${entry.isDir ? '/' : ''}`;
  return (
    <section class="panel" aria-labelledby="h-action">
      <h2 id="h-action">{title}</h2>
      <Alert error={error} />
      {result && (
        <Notice>
          {result} <a href="#activity">See progress</a>
        </Notice>
      )}
      {kind === 'move' && moves && !result && (
        <div>
          <p>
            These {moves.length} entr{moves.length === 1 ? 'y' : 'ies'} would be moved.
          </p>
          <ul class="preview">
            {moves.slice(0, 200).map((m) => (
              <li key={m.from}>
                {visibleName(m.from)} → {visibleName(m.to)}
              </li>
            ))}
          </ul>
          <button type="button" onClick={confirmMove}>
            Move {moves.length} entr{moves.length === 1 ? 'y' : 'ies'}
          </button>
          <button type="button" onClick={() => setMoves(undefined)}>
            Back
          </button>
        </div>
      )}
      {(kind === 'copy' || kind === 'move') && !result && !moves && (
        <form onSubmit={submit} class="grid">
          <label for="dest-location">Destination location</label>
          <select id="dest-location" value={dest} onChange={(e) => setDest(e.currentTarget.value)}>
            {locations.map((l) => (
              <option key={l.id} value={l.id}>
                {visibleName(l.label)}
              </option>
            ))}
          </select>
          <label for="dest-path">Destination path{entry.isDir ? ' (a folder, ending in /)' : ''}</label>
          <input
            id="dest-path"
            required
            value={destPath}
            onInput={(e) => setDestPath(e.currentTarget.value)}
          />
          {kind === 'copy' && entry.isDir && (
            <>
              <label for="overwrite">Objects already there</label>
              <select id="overwrite" value={overwrite} onChange={(e) => setOverwrite(e.currentTarget.value)}>
                <option value="always">Overwrite</option>
                <option value="if-missing">Skip</option>
              </select>
              <label for="manifest">Manifest (optional: a text file, one key per line)</label>
              <input
                id="manifest"
                type="file"
                accept=".txt,text/plain"
                onChange={async (e) => {
                  const file = e.currentTarget.files?.[0];
                  setManifest(
                    file
                      ? (await file.text())
                          .split(/\r?\n/)
                          .map((k) => k.trim())
                          .filter(Boolean)
                      : undefined,
                  );
                }}
              />
              {manifest && <p class="small">{manifest.length} keys from the manifest.</p>}
            </>
          )}
          <button type="submit">{kind === 'copy' ? 'Start copy' : 'Preview move'}</button>
        </form>
      )}
      {kind === 'remove' && !result && (
        <div>
          {!preview ? (
            <button type="button" onClick={loadPreview}>
              Preview removal
            </button>
          ) : (
            <>
              <p>
                These {preview.length} entr{preview.length === 1 ? 'y' : 'ies'} would be removed. This cannot
                be undone.
              </p>
              <ul class="preview">
                {preview.slice(0, 200).map((p) => (
                  <li key={p.path}>
                    {visibleName(p.path)} {p.isDir ? '' : `(${bytes(p.size)})`}
                  </li>
                ))}
              </ul>
              <button type="button" class="danger" onClick={confirmRemove}>
                Remove {preview.length} entr{preview.length === 1 ? 'y' : 'ies'}
              </button>
            </>
          )}
        </div>
      )}
      {kind === 'share' && (
        <div>
          {!link ? (
            <form onSubmit={submit}>
              <button type="submit">Create link</button>
            </form>
          ) : (
            <Notice>
              <p>The link, shown only now:</p>
              <input
                readOnly
                class="secret"
                aria-label="Share link"
                value={link}
                onFocus={(e) => e.currentTarget.select()}
              />
              <button type="button" onClick={() => void navigator.clipboard?.writeText(link)}>
                Copy link
              </button>
            </Notice>
          )}
        </div>
      )}
      <button type="button" onClick={onDone}>
        Close
      </button>
    </section>
  );
}

/** `path` as a pattern naming exactly itself: `\`, `*`, `?`, `[` and `{` escaped (docs/api.md, "Exact names"). */
function escapeGlob(path: string): string {
  return path.replace(/[\\*?[{]/g, (c) => `\\${c}`);
}
