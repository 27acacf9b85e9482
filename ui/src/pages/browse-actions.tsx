// What Browse starts on one entry or on a selection of the folder shown: a copy (a file's single copy,
// a folder's bulk prefix copy with overwrite mode and manifest; for a selection, one bulk copy of its
// files by manifest and one per folder), a move and a remove, each previewed before it is confirmed
// (a remove's preview is a dry run whose plan the confirmation runs: exactly what was shown is removed,
// docs/api.md "Plans"), share links with every option (one per file), a send of a file, and a verify of
// a folder against another (docs/api.md, "Verify"), which changes nothing.
import { useState } from 'preact/hooks';
import type { Accepted, BodyOf, Entry, Plan } from '../../../src/api/routes.js';
import { api } from '../api.js';
import { bytes, visibleName } from '../format.js';
import { Alert, message, Notice } from './common.js';
import { SendForm } from './sends.js';
import { type Loc, LocationPath, VerifyMode } from './transfer-fields.js';

/** The modes a copy's overwrite select offers, and a verify's mode select: the API's words. */
type Overwrite = NonNullable<BodyOf<'POST', '/v1/copy'>['overwrite']>;
type VerifyBy = NonNullable<BodyOf<'POST', '/v1/verify'>['mode']>;

export type Kind = 'copy' | 'move' | 'remove' | 'share' | 'send' | 'verify';
export interface Action {
  kind: Kind;
  entries: Entry[];
}

export const entriesWord = (n: number) => `${n} entr${n === 1 ? 'y' : 'ies'}`;
/** "This entry", "These 3 entries": the subject of a sentence about what a preview found. */
const theseEntries = (n: number) => (n === 1 ? 'This entry' : `These ${entriesWord(n)}`);
/** `folder` and `name` as one path: the folder's own trailing "/" and an empty folder (the root) allowed. */
const within = (folder: string, name: string) =>
  folder.replace(/\/+$/, '') ? `${folder.replace(/\/+$/, '')}/${name}` : name;
const slash = (p: string) => (p.endsWith('/') ? p : `${p}/`);
const one = (list: string[]) => (list.length === 1 && list[0] !== undefined ? list[0] : list);

/** `path` as a pattern naming exactly itself: `\`, `*`, `?`, `[` and `{` escaped (docs/api.md, "Exact names"). */
function escapeGlob(path: string): string {
  return path.replace(/[\\*?[{]/g, (c) => `\\${c}`);
}

/**
 * The entries listed, never a pattern that also names their neighbours (docs/api.md, "Exact names"):
 * files go as exact names (`literal`), each folder as its path, glob characters escaped, with /**
 * below it. A body can be only one of the two, so files and folders go in separate requests.
 */
function sources(location: string, entries: Entry[]) {
  return {
    files: entries.filter((e) => !e.isDir).map((e) => `${location}/${e.path}`),
    folders: entries.filter((e) => e.isDir).map((e) => ({ e, from: `${location}/${escapeGlob(e.path)}/**` })),
  };
}

function removeBodies(location: string, entries: Entry[]): BodyOf<'POST', '/remove'>[] {
  const { files, folders } = sources(location, entries);
  return [
    ...(files.length ? [{ path: one(files), literal: true }] : []),
    ...(folders.length ? [{ path: one(folders.map((f) => f.from)) }] : []),
  ];
}

/**
 * One entry moves to `to`, its new path (a folder's, the folder itself); a selection moves into the
 * folder `to`, each entry under its own name.
 */
function moveBodies(location: string, entries: Entry[], dest: string, to: string): BodyOf<'POST', '/move'>[] {
  const { files, folders } = sources(location, entries);
  const single = entries.length === 1;
  const into = `${dest}/${single && files.length ? to : slash(to)}`;
  return [
    ...(files.length ? [{ from: one(files), to: into, literal: true }] : []),
    ...folders.map((f) => ({ from: f.from, to: single ? into : `${into}${f.e.name}/` })),
  ];
}

/** A plan entry's `<location label>/<path>` without the location, as Browse shows paths. */
const inLocation = (path: string) => path.slice(path.indexOf('/') + 1);

/** What was started: a job's id, or a transfer's. */
const idOf = (r: Accepted) => ('job_id' in r ? r.job_id : r.id);

export function ActionPanel({
  action,
  location,
  folder,
  locations,
  onDone,
}: {
  action: Action;
  location: string;
  /** The folder shown, whose entries these are. */
  folder: string;
  locations: Loc[];
  onDone: () => void;
}) {
  const { kind, entries } = action;
  const first = entries[0] as Entry;
  const single = entries.length === 1;
  const [dest, setDest] = useState(location);
  // A copy beside the original by default; a move proposes no place (the folder it goes into is the
  // person's choice) and keeps the name (docs/console.md, "Browse").
  const [destPath, setDestPath] = useState(
    kind === 'move'
      ? ''
      : !single
        ? `${folder}-copy/`
        : first.isDir
          ? `${first.path}-copy/`
          : `${first.path}.copy`,
  );
  const [newName, setNewName] = useState(single ? first.name : '');
  /** Where a move goes: one entry to its folder and name, a selection into its folder. */
  const moveTo = single ? within(destPath, newName) : destPath;
  const [overwrite, setOverwrite] = useState<Overwrite>('always');
  const [mode, setMode] = useState('checksum');
  /** The job a verify started, which its result links to. */
  const [jobId, setJobId] = useState<string | undefined>(undefined);
  const [manifest, setManifest] = useState<string[] | undefined>(undefined);
  /** The plans of the remove's dry runs (one per body), which the confirmation runs. */
  const [preview, setPreview] = useState<Plan[] | undefined>(undefined);
  const [moves, setMoves] = useState<{ from: string; to: string }[] | undefined>(undefined);
  const [result, setResult] = useState<string | undefined>(undefined);
  const [links, setLinks] = useState<{ name: string; url: string }[] | undefined>(undefined);
  const [share, setShare] = useState({ password: '', expires: '', max: '' });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const files = entries.filter((e) => !e.isDir);
  const run = async (work: () => Promise<void>) => {
    if (busy) return;
    setBusy(true);
    try {
      setError(undefined);
      await work();
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  const copy = async () => {
    if (single) {
      const bulk = first.isDir;
      const r = await api('POST', '/v1/copy', {
        body: {
          from: `${location}:${first.path}${bulk ? '/' : ''}`,
          to: `${dest}:${bulk ? slash(destPath) : destPath}`,
          ...(bulk ? { overwrite, ...(manifest ? { manifest } : {}) } : {}),
        },
      });
      // A prefix copies as a job, one file as a transfer (docs/api.md, "Copy").
      return setResult(
        'job_id' in r ? `Bulk copy started (job ${r.job_id}).` : `Copy started (transfer ${r.id}).`,
      );
    }
    // The selection's files as one bulk copy of the folder limited to them by a manifest; each folder
    // as a bulk copy of its own into the destination under its name.
    const to = slash(destPath);
    const bodies = [
      ...(files.length
        ? [
            {
              from: `${location}:${folder}/`,
              to: `${dest}:${to}`,
              overwrite,
              manifest: files.map((e) => e.name),
            },
          ]
        : []),
      ...entries
        .filter((e) => e.isDir)
        .map((e) => ({ from: `${location}:${e.path}/`, to: `${dest}:${to}${e.name}/`, overwrite })),
    ];
    const jobs = await Promise.all(bodies.map((body) => api('POST', '/v1/copy', { body })));
    setResult(`Copy started (job ${jobs.map(idOf).join(', job ')}).`);
  };
  const makeLinks = async () => {
    const options = {
      ...(share.password ? { password: share.password } : {}),
      ...(share.expires ? { expires_at: new Date(share.expires).toISOString() } : {}),
      ...(share.max ? { max_downloads: Number(share.max) } : {}),
    };
    const made: { name: string; url: string }[] = [];
    // One at a time, so that a refusal (a past expiry, say) stops at the first, not once per file.
    for (const e of files) {
      const r = await api('POST', '/share', {
        body: { file: `${location}/${e.path}`, literal: true, ...options },
      });
      made.push({ name: e.name, url: r.url });
      setLinks([...made]);
    }
  };
  const verify = async () => {
    const r = await api('POST', '/v1/verify', {
      body: { from: `${location}:${first.path}/`, to: `${dest}:${slash(destPath)}`, mode: mode as VerifyBy },
    });
    setJobId(r.job_id);
    setResult(`Verify started (job ${r.job_id}): it compares the two folders and changes nothing.`);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      if (kind === 'copy') await copy();
      else if (kind === 'verify') await verify();
      else if (
        kind === 'move' &&
        dest === location &&
        moveTo.replace(/\/+$/, '') === (single ? first.path : folder)
      )
        setError('That is where it is now: choose another folder (or, for one entry, another name).');
      else if (kind === 'move')
        // First what would move and where; the moves run on confirm.
        setMoves(
          (
            await Promise.all(
              moveBodies(location, entries, dest, moveTo).map((body) =>
                api('POST', '/move/preview', { body }),
              ),
            )
          ).flatMap((r) => r.entries),
        );
      else if (kind === 'share') await makeLinks();
    });
  };
  const loadPreview = () =>
    run(async () =>
      setPreview(
        await Promise.all(
          removeBodies(location, entries).map((b) =>
            api('POST', '/remove', { body: { ...b, dry_run: true } }),
          ),
        ),
      ),
    );
  const ids = (list: Accepted[]) => list.map(idOf).join(', transfer ');
  const confirmMove = () =>
    run(async () => {
      const r = await Promise.all(
        moveBodies(location, entries, dest, moveTo).map((body) => api('POST', '/move', { body })),
      );
      setResult(`Move started (transfer ${ids(r)}).`);
      setMoves(undefined);
    });
  // Runs the plans shown: an object that changed or appeared since the preview is left alone.
  const confirmRemove = () =>
    run(async () => {
      const r = await Promise.all(
        (preview ?? []).map((p) => api('POST', '/v1/plans/{id}/run', { id: p.plan_id })),
      );
      setResult(`Removal started (transfer ${ids(r)}).`);
      setPreview(undefined);
    });
  const planned = (preview ?? []).reduce((n, p) => n + p.total, 0);
  const shown = (preview ?? []).flatMap((p) => p.entries);
  const verb = `${kind[0]?.toUpperCase()}${kind.slice(1)}`;
  const title = single
    ? `${verb} ${visibleName(first.path)}${first.isDir ? '/' : ''}`
    : `${verb} ${entriesWord(entries.length)}`;
  const shareField = (key: keyof typeof share, label: string, props: Record<string, unknown>) => (
    <>
      <label for={`share-${key}`}>{label}</label>
      <input
        id={`share-${key}`}
        value={share[key]}
        onInput={(e) => setShare({ ...share, [key]: e.currentTarget.value })}
        {...props}
      />
    </>
  );
  return (
    <section class="panel" aria-labelledby="h-action">
      <h2 id="h-action" tabIndex={-1}>
        {title}
      </h2>
      {!single && (
        <p class="small">{entries.map((e) => visibleName(e.name) + (e.isDir ? '/' : '')).join(', ')}</p>
      )}
      <Alert error={error} />
      {result && (
        <Notice>
          {result} <a href={jobId ? `#activity/${jobId}` : '#activity'}>See progress</a>
        </Notice>
      )}
      {kind === 'move' && moves && !result && (
        <div>
          <p>{theseEntries(moves.length)} would be moved.</p>
          <ul class="preview">
            {moves.slice(0, 200).map((m) => (
              <li key={m.from}>
                {visibleName(m.from)} → {visibleName(m.to)}
              </li>
            ))}
          </ul>
          <button type="button" disabled={busy} onClick={confirmMove}>
            Move {entriesWord(moves.length)}
          </button>
          <button type="button" onClick={() => setMoves(undefined)}>
            Back
          </button>
        </div>
      )}
      {(kind === 'copy' || kind === 'move') && !result && !moves && (
        <form onSubmit={submit} class="grid">
          <LocationPath
            id="dest"
            what="Destination"
            pathLabel={
              kind === 'move'
                ? 'Destination folder'
                : `Destination ${single ? 'path' : 'folder'}${single && first.isDir ? ' (a folder, ending in /)' : ''}`
            }
            locations={locations}
            location={dest}
            path={destPath}
            onLocation={setDest}
            onPath={setDestPath}
            placeholder={kind === 'move' ? `e.g. ${folder.split('/')[0] ?? ''}/archive` : undefined}
          />
          {kind === 'move' && single && (
            <>
              <label for="dest-name">Name there</label>
              <input
                id="dest-name"
                required
                autocomplete="off"
                value={newName}
                onInput={(e) => setNewName(e.currentTarget.value)}
              />
            </>
          )}
          {kind === 'copy' && (!single || first.isDir) && (
            <>
              <label for="overwrite">Objects already there</label>
              <select
                id="overwrite"
                value={overwrite}
                onChange={(e) => setOverwrite(e.currentTarget.value as Overwrite)}
              >
                <option value="always">Overwrite</option>
                <option value="if-missing">Skip</option>
              </select>
            </>
          )}
          {kind === 'copy' && single && first.isDir && (
            <>
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
              {manifest && (
                <p class="small">
                  {manifest.length} key{manifest.length === 1 ? '' : 's'} from the manifest.
                </p>
              )}
            </>
          )}
          <button type="submit" disabled={busy}>
            {kind === 'copy' ? 'Start copy' : 'Preview move'}
          </button>
        </form>
      )}
      {kind === 'verify' && !result && (
        <form onSubmit={submit} class="grid">
          <LocationPath
            id="dest"
            what="Compare with"
            pathLabel="Folder to compare with"
            locations={locations}
            location={dest}
            path={destPath}
            onLocation={setDest}
            onPath={setDestPath}
          />
          <VerifyMode id="verify-mode" value={mode} onChange={setMode} />
          <button type="submit" disabled={busy}>
            Start verify
          </button>
        </form>
      )}
      {kind === 'remove' && !result && (
        <div>
          {!preview ? (
            <button type="button" disabled={busy} onClick={loadPreview}>
              Preview removal
            </button>
          ) : (
            <>
              <p>
                {theseEntries(planned)} would be removed. This cannot be undone. Only{' '}
                {planned === 1 ? 'it is' : 'these are'} removed: anything changed or added before you confirm
                is left alone.
              </p>
              <ul class="preview">
                {shown.slice(0, 200).map((p) => (
                  <li key={p.path}>
                    {visibleName(inLocation(p.path ?? ''))} {p.size === undefined ? '' : `(${bytes(p.size)})`}
                  </li>
                ))}
              </ul>
              {planned > Math.min(shown.length, 200) && (
                <p class="small">and {planned - Math.min(shown.length, 200)} more.</p>
              )}
              <button type="button" class="danger" disabled={busy} onClick={confirmRemove}>
                Remove {entriesWord(planned)}
              </button>
            </>
          )}
        </div>
      )}
      {kind === 'share' &&
        (!links ? (
          <form onSubmit={submit} class="grid">
            {files.length < entries.length && (
              <p class="small">Folders are not shared: a link is made for each file.</p>
            )}
            {shareField('password', 'Password (optional)', {
              type: 'password',
              autocomplete: 'new-password',
            })}
            {shareField('expires', 'Expires (optional)', { type: 'datetime-local' })}
            {shareField('max', 'Download limit (optional)', { type: 'number', min: 1, step: 1 })}
            <button type="submit" disabled={busy || files.length === 0}>
              {files.length === 1 ? 'Create link' : `Create ${files.length} links`}
            </button>
          </form>
        ) : (
          <Notice>
            <p>
              {links.length === 1 ? 'The link, shown only now' : 'The links, shown only now'}
              {share.password ? ' (pass the password on another way)' : ''}:
            </p>
            {links.map((l) => (
              <div class="row" key={l.url}>
                <input
                  readOnly
                  class="secret"
                  aria-label={single ? 'Share link' : `Share link for ${visibleName(l.name)}`}
                  value={l.url}
                  onFocus={(e) => e.currentTarget.select()}
                />
                <button
                  type="button"
                  aria-label={single ? undefined : `Copy link for ${visibleName(l.name)}`}
                  onClick={() => void navigator.clipboard?.writeText(l.url)}
                >
                  Copy link
                </button>
              </div>
            ))}
          </Notice>
        ))}
      {kind === 'send' && <SendForm file={`${location}/${first.path}`} />}
      <button type="button" onClick={onDone}>
        Close
      </button>
    </section>
  );
}
