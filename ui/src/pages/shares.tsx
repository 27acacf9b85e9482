// Share links (docs/api.md, "Share links"): the list with download counts, and revoke. Links are made
// from the browser, where the link is shown once. Each link's downloads (its access log, GET
// /v1/shares/{id}/downloads) open in the row under it.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import type { ShareDownload } from '../../../src/api/shares.js';
import { api } from '../api.js';
import { bytes, time, visibleName } from '../format.js';
import { can } from '../scopes.js';
import { Alert, message, Needs, useLoad } from './common.js';

interface Share {
  id: string;
  source: string;
  state: 'active' | 'expired' | 'used_up' | 'revoked';
  created_at: string;
  expires_at?: string;
  revoked_at?: string;
  has_password: boolean;
  downloads: number;
  max_downloads?: number;
}

interface Downloads {
  downloads: ShareDownload[];
  next_cursor?: string;
}

/** How a download ended: the whole file, cut before its end, or still being written. */
const outcome = (d: ShareDownload) => (d.completed ? 'completed' : d.ended_at ? 'cut' : 'in progress');

/** A link's downloads, newest first: time, address, bytes and whether it completed; older ones on demand. */
function DownloadLog({ share, id }: { share: Share; id: string }) {
  const [older, setOlder] = useState<ShareDownload[]>([]);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const path = `/v1/shares/${share.id}/downloads?limit=50`;
  const { data, error, loading, reload, setError } = useLoad(async () => {
    const page = await api<Downloads>('GET', path);
    setOlder([]);
    setCursor(page.next_cursor);
    return page.downloads;
  }, [share.id]);
  const more = async () => {
    if (!cursor) return;
    try {
      const page = await api<Downloads>('GET', `${path}&cursor=${encodeURIComponent(cursor)}`);
      setOlder((o) => [...o, ...page.downloads]);
      setCursor(page.next_cursor);
    } catch (err) {
      setError(message(err));
    }
  };
  const rows = [...(data ?? []), ...older];
  const name = visibleName(share.source);
  return (
    <div class="downloads" id={id}>
      <h2 id={`${id}-h`}>Downloads of {name}</h2>
      <Alert error={error} />
      {loading && !data ? <p>Loading…</p> : null}
      {data && rows.length === 0 ? <p>No downloads yet.</p> : null}
      {rows.length > 0 ? (
        <table>
          <caption class="sr-only">Downloads of {name}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Address</th>
              <th scope="col">Bytes</th>
              <th scope="col">Outcome</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d, i) => (
              <tr key={`${d.at} ${i}`}>
                <th scope="row">{time(d.at)}</th>
                <td data-label="Address">{d.ip}</td>
                <td data-label="Bytes">
                  {bytes(d.bytes)}
                  {d.status === 206 ? ' (a range)' : ''}
                </td>
                <td data-label="Outcome">{outcome(d)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <div class="row">
        {cursor ? (
          <button type="button" onClick={() => void more()}>
            Older downloads
          </button>
        ) : null}
        <button type="button" aria-label={`Reload downloads of ${name}`} onClick={reload}>
          Reload
        </button>
      </div>
    </div>
  );
}

export function Shares() {
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const { data, error, reload } = useLoad(
    () =>
      api<{ shares: Share[]; next_cursor?: string }>(
        'GET',
        `/v1/shares?limit=50${cursor ? `&cursor=${cursor}` : ''}`,
      ),
    [cursor],
  );
  const [failed, setFailed] = useState<string | undefined>(undefined);
  // The link whose downloads are open, in the row under it.
  const [open, setOpen] = useState<string | undefined>(undefined);
  const revoke = async (s: Share) => {
    if (!confirm(`Revoke the link to ${visibleName(s.source)}? It stops working at once.`)) return;
    try {
      await api('DELETE', `/v1/shares/${s.id}`);
      reload();
    } catch (err) {
      setFailed(message(err));
    }
  };
  return (
    <section aria-labelledby="h-shares">
      <h1 id="h-shares">Shares</h1>
      {can('share') ? (
        <p>Make a link from a file in a location's browser.</p>
      ) : (
        <Needs scope="share" what="to make or revoke a share link" />
      )}
      <Alert error={error ?? failed} />
      <table class="shares">
        <caption class="sr-only">Share links, newest first</caption>
        <thead>
          <tr>
            <th scope="col">File</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Downloads</th>
            <th scope="col">State</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {(data?.shares ?? []).map((s) => (
            <Fragment key={s.id}>
              <tr>
                <th scope="row">{visibleName(s.source)}</th>
                <td data-label="Created">{time(s.created_at)}</td>
                <td data-label="Expires">{time(s.expires_at)}</td>
                <td data-label="Downloads">
                  {s.downloads}
                  {s.max_downloads ? ` of ${s.max_downloads}` : ''}
                </td>
                <td data-label="State">
                  {s.state.replace('_', ' ')}
                  {s.state === 'active' && s.has_password ? ', password' : ''}
                </td>
                <td class="actions" data-label="">
                  <button
                    type="button"
                    aria-label={`Downloads of ${visibleName(s.source)}`}
                    aria-expanded={open === s.id}
                    aria-controls={open === s.id ? `downloads-${s.id}` : undefined}
                    onClick={() => setOpen(open === s.id ? undefined : s.id)}
                  >
                    Downloads
                  </button>
                  {s.state !== 'revoked' && can('share') && (
                    <button
                      type="button"
                      class="danger"
                      aria-label={`Revoke link to ${visibleName(s.source)}`}
                      onClick={() => revoke(s)}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
              {open === s.id ? (
                <tr class="downloads">
                  <td colSpan={6}>
                    <DownloadLog share={s} id={`downloads-${s.id}`} />
                  </td>
                </tr>
              ) : null}
            </Fragment>
          ))}
        </tbody>
      </table>
      {data?.next_cursor && (
        <button type="button" onClick={() => setCursor(data.next_cursor)}>
          Older shares
        </button>
      )}
    </section>
  );
}
