// Share links (docs/api.md, "Share links"): the list with download counts, and revoke. Links are made
// from the browser, where the link is shown once. Each link's downloads (its access log, GET
// /v1/shares/{id}/downloads) open in the row under it.
import { useState } from 'preact/hooks';
import type { Share, ShareDownload } from '../../../src/api/routes.js';
import { api } from '../api.js';
import { bytes, time, visibleName } from '../format.js';
import { can } from '../scopes.js';
import { Alert, message, Needs } from './common.js';
import { actions, type Column, More, Table, usePages } from './table.js';

/** How a download ended: the whole file, cut before its end, or still being written. */
const outcome = (d: ShareDownload) => (d.completed ? 'completed' : d.ended_at ? 'cut' : 'in progress');

/** A link's downloads, newest first: time, address, bytes and whether it completed; older ones on demand. */
function DownloadLog({ share, id }: { share: Share; id: string }) {
  const pages = usePages(
    async (cursor) => {
      const page = await api('GET', '/v1/shares/{id}/downloads', {
        id: share.id,
        query: { limit: '50', cursor: cursor || undefined },
      });
      return { items: page.downloads, next_cursor: page.next_cursor };
    },
    [share.id],
  );
  const { data, error, loading, reload, rows } = pages;
  const name = visibleName(share.source);
  return (
    <div class="downloads" id={id}>
      <h2 id={`${id}-h`}>Downloads of {name}</h2>
      <Alert error={error} />
      {loading && !data ? <p>Loading…</p> : null}
      {data && rows.length === 0 ? <p>No downloads yet.</p> : null}
      {rows.length > 0 ? (
        <Table
          caption={`Downloads of ${name}, newest first`}
          columns={DOWNLOAD_COLUMNS}
          rows={rows}
          rowKey={(d, i) => `${d.at} ${i}`}
        />
      ) : null}
      <div class="row">
        <More pages={pages}>Older downloads</More>
        <button type="button" aria-label={`Reload downloads of ${name}`} onClick={reload}>
          Reload
        </button>
      </div>
    </div>
  );
}

const DOWNLOAD_COLUMNS: Column<ShareDownload>[] = [
  { name: 'Time', cell: (d) => time(d.at) },
  { name: 'Address', cell: (d) => d.ip },
  { name: 'Bytes', cell: (d) => `${bytes(d.bytes)}${d.status === 206 ? ' (a range)' : ''}` },
  { name: 'Outcome', cell: outcome },
];

export function Shares() {
  const pages = usePages(async (cursor) => {
    const page = await api('GET', '/v1/shares', { query: { limit: '50', cursor: cursor || undefined } });
    return { items: page.shares, next_cursor: page.next_cursor };
  }, []);
  const { error, reload, rows } = pages;
  const [failed, setFailed] = useState<string | undefined>(undefined);
  // The link whose downloads are open, in the row under it.
  const [open, setOpen] = useState<string | undefined>(undefined);
  const revoke = async (s: Share) => {
    if (!confirm(`Revoke the link to ${visibleName(s.source)}? It stops working at once.`)) return;
    try {
      await api('DELETE', '/v1/shares/{id}', { id: s.id });
      reload();
    } catch (err) {
      setFailed(message(err));
    }
  };
  const columns: Column<Share>[] = [
    { name: 'File', cell: (s) => visibleName(s.source) },
    { name: 'Created', cell: (s) => time(s.created_at) },
    { name: 'Expires', cell: (s) => time(s.expires_at) },
    { name: 'Downloads', cell: (s) => `${s.downloads}${s.max_downloads ? ` of ${s.max_downloads}` : ''}` },
    {
      name: 'State',
      cell: (s) =>
        `${s.state.replace('_', ' ')}${s.state === 'active' && s.has_password ? ', password' : ''}`,
    },
    actions(
      (s) => (
        <>
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
        </>
      ),
      '',
    ),
  ];
  return (
    <section aria-labelledby="h-shares">
      <h1 id="h-shares">Shares</h1>
      {can('share') ? (
        <p>Make a link from a file in a location's browser.</p>
      ) : (
        <Needs scope="share" what="to make or revoke a share link" />
      )}
      <Alert error={error ?? failed} />
      <Table
        caption="Share links, newest first"
        class="shares"
        columns={columns}
        rows={rows}
        rowKey={(s) => s.id}
        after={(s) =>
          open === s.id ? (
            <tr class="downloads">
              <td colSpan={columns.length}>
                <DownloadLog share={s} id={`downloads-${s.id}`} />
              </td>
            </tr>
          ) : null
        }
      />
      <More pages={pages}>Older shares</More>
    </section>
  );
}
