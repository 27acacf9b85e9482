// Locations with their status and refresh health (docs/api.md, "Locations" and "Location health").
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { time, visibleName } from '../format.js';
import { Alert, message, Notice, useLoad } from './common.js';

interface Summary {
  id: string;
  provider: string;
  label: string;
  status: string;
  validation_error?: string;
  created_at: string;
}
interface Status {
  status: string;
  refresh_requested: boolean;
  consecutive_refresh_failures: number;
  access_token_expires_at?: string;
  last_refresh_attempt_at?: string;
  last_refresh_error?: string;
  failure_reason?: string;
}

async function load(): Promise<Array<Summary & { health: Status }>> {
  const list = await api<Summary[]>('GET', '/v1/locations');
  return Promise.all(
    list.map(async (l) => ({
      ...l,
      health: await api<Status>('POST', '/v1/locations/status', { id: l.id }),
    })),
  );
}

/** The providers whose credentials are OAuth tokens the refresher renews; the others are static keys. */
const OAUTH = new Set(['dropbox', 'drive', 'onedrive', 'box']);

export function Locations() {
  const { data, error, loading, reload } = useLoad(load, []);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [failed, setFailed] = useState<string | undefined>(undefined);
  const refresh = async (l: Summary) => {
    try {
      await api('POST', '/v1/locations/refresh', { id: l.id });
      setNotice(`Refresh of ${visibleName(l.label)} requested.`);
      reload();
    } catch (err) {
      setFailed(message(err));
    }
  };
  return (
    <section aria-labelledby="h-locations">
      <h1 id="h-locations">Locations</h1>
      <Alert error={error ?? failed} />
      {notice && <Notice>{notice}</Notice>}
      {loading && !data ? <p>Loading…</p> : null}
      {data && data.length === 0 ? <p>No locations yet. Create one with POST /v1/locations.</p> : null}
      {data && data.length > 0 ? (
        <table>
          <caption class="sr-only">Locations and their health</caption>
          <thead>
            <tr>
              <th scope="col">Label</th>
              <th scope="col">Provider</th>
              <th scope="col">Status</th>
              <th scope="col">Token expires</th>
              <th scope="col">Last refresh</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {data.map((l) => (
              <tr key={l.id}>
                <th scope="row">
                  <a href={`#browse/${encodeURIComponent(l.id)}`}>{visibleName(l.label)}</a>
                </th>
                <td>{l.provider}</td>
                <td>
                  <span class={`badge ${l.health.status}`}>{l.health.status.replace('_', ' ')}</span>
                  {l.health.failure_reason || l.health.last_refresh_error ? (
                    <div class="small">{l.health.failure_reason ?? l.health.last_refresh_error}</div>
                  ) : null}
                </td>
                <td>{time(l.health.access_token_expires_at)}</td>
                <td>
                  {time(l.health.last_refresh_attempt_at)}
                  {l.health.consecutive_refresh_failures > 0
                    ? ` (${l.health.consecutive_refresh_failures} failed)`
                    : ''}
                  {l.health.refresh_requested ? ' (requested)' : ''}
                </td>
                <td>
                  {/* Only OAuth credentials have a token to refresh (docs/api.md, "Location health"). */}
                  {OAUTH.has(l.provider) ? (
                    <button
                      type="button"
                      onClick={() => refresh(l)}
                      aria-label={`Refresh ${visibleName(l.label)}`}
                    >
                      Refresh
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
