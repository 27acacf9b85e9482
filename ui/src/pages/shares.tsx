// Share links (docs/api.md, "Share links"): the list with download counts, and revoke. Links are made
// from the browser, where the link is shown once.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { time, visibleName } from '../format.js';
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
      <table>
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
            <tr key={s.id}>
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
