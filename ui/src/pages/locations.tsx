// Locations with their status and refresh health (docs/api.md, "Locations" and "Location health"): the
// list, the form that creates one (location-create.tsx, built from GET /v1/providers), and the panel of
// one location: its health in full, rename, replace the secret, delete after typing its label
// (location-manage.tsx).
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { time, visibleName } from '../format.js';
import { can, canWhole, limitedToLocations } from '../scopes.js';
import { Alert, message, Notice, useLoad } from './common.js';
import { CreateForm } from './location-create.js';
import { loadProviders } from './location-fields.js';
import { load } from './location-health.js';
import { Manage } from './location-manage.js';

export function Locations() {
  const { data, error, loading, reload } = useLoad(load, []);
  const providers = useLoad(loadProviders, []);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [failed, setFailed] = useState<string | undefined>(undefined);
  const [creating, setCreating] = useState(false);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const newButton = useRef<HTMLButtonElement>(null);
  const act = async (work: () => Promise<unknown>, done: string) => {
    try {
      await work();
      setFailed(undefined);
      setNotice(done);
      reload();
      return true;
    } catch (err) {
      setNotice(undefined);
      setFailed(message(err));
      return false;
    }
  };
  // A requested refresh runs at the refresher's next turn: look again until it has.
  const pending = data?.some((l) => l.health.refresh_requested) ?? false;
  useEffect(() => {
    if (!pending) return;
    const timer = setTimeout(reload, 2000);
    return () => clearTimeout(timer);
  }, [data, pending, reload]);
  const opened = data?.find((l) => l.id === open);
  return (
    <section aria-labelledby="h-locations">
      <h1 id="h-locations">Locations</h1>
      <Alert error={error ?? providers.error ?? failed} />
      {notice && <Notice>{notice}</Notice>}
      {creating && !providers.data ? (
        <div class="row">
          <p>{providers.error ? 'The providers could not be read.' : 'Loading the providers…'}</p>
          <button type="button" onClick={() => setCreating(false)}>
            Cancel
          </button>
        </div>
      ) : creating && providers.data ? (
        <CreateForm
          providers={providers.data}
          onDone={(label) => {
            setCreating(false);
            setFailed(undefined);
            setNotice(`Location ${visibleName(label)} created.`);
            reload();
            newButton.current?.focus();
          }}
          onCancel={() => {
            setCreating(false);
            newButton.current?.focus();
          }}
        />
      ) : canWhole() ? (
        <div class="row">
          <button type="button" ref={newButton} onClick={() => setCreating(true)}>
            New location
          </button>
        </div>
      ) : null}
      {loading && !data ? <p>Loading…</p> : null}
      {data && data.length === 0 ? (
        <p>
          {canWhole()
            ? 'No locations yet: New location adds one.'
            : limitedToLocations()
              ? 'None of the locations this API key is limited to exists any more.'
              : 'No locations yet (adding one needs the admin scope).'}
        </p>
      ) : null}
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
                <td data-label="Provider">{l.provider}</td>
                <td data-label="Status">
                  <span class={`badge ${l.health.status}`}>{l.health.status.replace('_', ' ')}</span>
                  {l.health.failure_reason || l.health.last_refresh_error ? (
                    <div class="small">{l.health.failure_reason ?? l.health.last_refresh_error}</div>
                  ) : null}
                </td>
                <td data-label="Token expires">{time(l.health.access_token_expires_at)}</td>
                <td data-label="Last refresh">
                  {time(l.health.last_refresh_attempt_at)}
                  {l.health.consecutive_refresh_failures > 0
                    ? ` (${l.health.consecutive_refresh_failures} failed)`
                    : ''}
                  {l.health.refresh_requested ? ' (requested)' : ''}
                </td>
                <td data-label="Actions" class="actions">
                  {/* Without admin the panel shows the health only: Health, not Manage. */}
                  <button
                    type="button"
                    aria-label={`${can('admin') ? 'Manage' : 'Health of'} ${visibleName(l.label)}`}
                    aria-expanded={open === l.id}
                    onClick={() => setOpen(open === l.id ? undefined : l.id)}
                  >
                    {can('admin') ? 'Manage' : 'Health'}
                  </button>
                  {/* Only OAuth credentials have a token to refresh (docs/api.md, "Location health"). */}
                  {l.health.rotation_class !== undefined && can('admin') ? (
                    <button
                      type="button"
                      onClick={() =>
                        void act(
                          () => api('POST', '/v1/locations/refresh', { body: { id: l.id } }),
                          `Refresh of ${visibleName(l.label)} requested.`,
                        )
                      }
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
      {opened ? (
        <Manage
          key={opened.id}
          l={opened}
          providers={providers.data}
          act={act}
          onDeleted={() => {
            setOpen(undefined);
            newButton.current?.focus();
          }}
          onClose={() => setOpen(undefined)}
        />
      ) : null}
    </section>
  );
}
