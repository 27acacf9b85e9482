// Locations with their status and refresh health (docs/api.md, "Locations" and "Location health"):
// create one with a form per provider, and for each: its health in full, rename, replace the secret,
// delete after typing its label. The forms are built from GET /v1/providers ("Providers"): each field
// is as the provider's store declares it, and this file names none of them (test/layering/ checks).
import { useEffect, useRef, useState } from 'preact/hooks';
import type {
  LocationStatusView,
  LocationSummary,
  ProviderField,
  ProviderView,
} from '../../../src/api/routes.js';
import { api } from '../api.js';
import { time, visibleName } from '../format.js';
import { can, canWhole, limitedToLocations } from '../scopes.js';
import { Alert, message, Needs, Notice, useLoad } from './common.js';

/** A location as listed, with its health (POST /v1/locations/status). */
type Located = LocationSummary & { health: LocationStatusView };

async function load(): Promise<Located[]> {
  const list = await api('GET', '/v1/locations');
  return Promise.all(
    list.map(async (l) => ({
      ...l,
      health: await api('POST', '/v1/locations/status', { body: { id: l.id } }),
    })),
  );
}

/** Every provider with its secret and metadata fields, as its store declares them (GET /v1/providers). */
async function loadProviders(): Promise<ProviderView[]> {
  return (await api('GET', '/v1/providers')).providers;
}

type Values = Record<string, string>;

/** The secret as the API takes it: every field as typed (a key file as its JSON text). */
function secretOf(form: ProviderView, values: Values): Record<string, string> {
  return Object.fromEntries(form.secret.map((f) => [f.key, values[f.key] ?? '']));
}

/** The metadata fields given (empty ones left out), or undefined when none is. */
function metadataOf(form: ProviderView, values: Values): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const f of form.metadata) {
    const v = (values[f.key] ?? '').trim();
    if (!v) continue;
    out[f.key] = f.type === 'boolean' ? v === 'yes' : v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The inputs of some fields; `prefix` keeps their ids apart from another form's on the page. */
function Fields({
  fields,
  values,
  set,
  prefix,
}: {
  fields: readonly ProviderField[];
  values: Values;
  set: (key: string, value: string) => void;
  prefix: string;
}) {
  return (
    <>
      {fields.map((f) => {
        const id = `${prefix}-${f.key}`;
        const help = f.help ? (
          <span class="help" id={`${id}-help`}>
            {f.help}
          </span>
        ) : null;
        const described = f.help ? `${id}-help` : undefined;
        if (f.type === 'boolean')
          return (
            <div class="field" key={f.key}>
              <label for={id}>{f.label}</label>
              <select
                id={id}
                aria-describedby={described}
                value={values[f.key] ?? ''}
                onChange={(e) => set(f.key, e.currentTarget.value)}
              >
                <option value="">default</option>
                <option value="yes">yes</option>
                <option value="no">no</option>
              </select>
              {help}
            </div>
          );
        if (f.type === 'service-account-key')
          return (
            <div class="field" key={f.key}>
              <label for={`${id}-file`}>{f.label}: key file</label>
              <input
                id={`${id}-file`}
                type="file"
                accept=".json,application/json"
                aria-describedby={described}
                onChange={(e) => {
                  const file = e.currentTarget.files?.[0];
                  // A key file is about 2 KiB; the API takes at most 16 KiB (SECRET_FIELD_MAX).
                  if (file && file.size <= 16 * 1024) void file.text().then((text) => set(f.key, text));
                  else if (file) set(f.key, '');
                }}
              />
              <label for={id}>or paste it</label>
              <textarea
                id={id}
                rows={4}
                autocomplete="off"
                spellcheck={false}
                maxLength={16 * 1024}
                value={values[f.key] ?? ''}
                onInput={(e) => set(f.key, e.currentTarget.value)}
              />
              {help}
            </div>
          );
        return (
          <div class="field" key={f.key}>
            <label for={id}>{f.label}</label>
            <input
              id={id}
              type={f.sensitive ? 'password' : 'text'}
              autocomplete="off"
              spellcheck={false}
              aria-describedby={described}
              value={values[f.key] ?? ''}
              onInput={(e) => set(f.key, e.currentTarget.value)}
            />
            {help}
          </div>
        );
      })}
    </>
  );
}

/** Secret inputs are emptied after every submit, whatever its outcome; a file input is reset too. */
function useValues(): [Values, (key: string, value: string) => void, (keep?: string[]) => void] {
  const [values, setValues] = useState<Values>({});
  const set = (key: string, value: string) => setValues((v) => ({ ...v, [key]: value }));
  const clear = (keep: string[] = []) =>
    setValues((v) => Object.fromEntries(keep.map((k) => [k, v[k] ?? ''])));
  return [values, set, clear];
}

function CreateForm({
  providers,
  onDone,
  onCancel,
}: {
  providers: readonly ProviderView[];
  onDone: (label: string) => void;
  onCancel: () => void;
}) {
  // The first provider the server lists is the one chosen at first.
  const [provider, setProvider] = useState(providers[0]?.id ?? '');
  const [label, setLabel] = useState('');
  const [values, set, clear] = useValues();
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const fileKey = useRef(0);
  const first = useRef<HTMLSelectElement>(null);
  // The form takes the place of the button that opened it: focus goes to its first field.
  useEffect(() => first.current?.focus(), []);
  const form = providers.find((p) => p.id === provider);
  const submit = async () => {
    if (!form) return;
    setBusy(true);
    const metadata = metadataOf(form, values);
    const secret = secretOf(form, values);
    // The secret leaves the form's state before the request is answered.
    clear(form.metadata.map((f) => f.key));
    fileKey.current++;
    try {
      await api('POST', '/v1/locations', {
        body: { provider: form.id, label, secret, ...(metadata ? { metadata } : {}) },
      });
      setError(undefined);
      clear();
      setLabel('');
      onDone(label);
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel" aria-labelledby="h-new-location">
      <h2 id="h-new-location">New location</h2>
      <Alert error={error} />
      <form
        class="fields"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <div class="field">
          <label for="new-provider">Provider</label>
          <select
            id="new-provider"
            ref={first}
            value={provider}
            onChange={(e) => {
              setProvider(e.currentTarget.value);
              clear();
            }}
          >
            {providers.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name} ({p.id})
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="new-label">Label</label>
          <input
            id="new-label"
            required
            maxLength={256}
            aria-describedby="new-label-help"
            value={label}
            onInput={(e) => setLabel(e.currentTarget.value)}
          />
          <span class="help" id="new-label-help">
            The name you give it in paths, e.g. photos in photos:bucket/a.jpg
          </span>
        </div>
        <fieldset>
          <legend>Secret ({provider})</legend>
          <Fields
            key={`${provider}-${fileKey.current}`}
            fields={form?.secret ?? []}
            values={values}
            set={set}
            prefix="new"
          />
        </fieldset>
        {form && form.metadata.length > 0 ? (
          <fieldset>
            <legend>Settings</legend>
            <Fields fields={form.metadata} values={values} set={set} prefix="new" />
          </fieldset>
        ) : null}
        <div class="row">
          <button type="submit" disabled={busy}>
            Create location
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}

/** The refresher's view of one location, as words (docs/api.md, "Location health"). */
function Health({ l }: { l: Located }) {
  const h = l.health;
  // Only OAuth credentials rotate (docs/api.md, "Location health": rotation_class).
  const oauth = h.rotation_class !== undefined;
  return (
    <dl class="health">
      <dt>Status</dt>
      <dd>
        <span class={`badge ${h.status}`}>{h.status.replace('_', ' ')}</span>
        {h.status === 'failed'
          ? ' The grant is gone: connect the account again and replace the secret.'
          : h.status === 'needs_attention'
            ? ' A person must act: fix the cause, then Refresh, or replace the secret.'
            : ''}
      </dd>
      {h.failure_reason ? (
        <>
          <dt>Why</dt>
          <dd>{h.failure_reason}</dd>
        </>
      ) : null}
      {h.last_refresh_error && h.last_refresh_error !== h.failure_reason ? (
        <>
          <dt>Refresher's last error</dt>
          <dd>{h.last_refresh_error}</dd>
        </>
      ) : null}
      {l.validation_error && l.validation_error !== h.failure_reason ? (
        <>
          <dt>Provider's answer</dt>
          <dd>{l.validation_error}</dd>
        </>
      ) : null}
      {oauth ? (
        <>
          <dt>Access token expires</dt>
          <dd>{time(h.access_token_expires_at)}</dd>
          <dt>Last refresh attempt</dt>
          <dd>
            {time(h.last_refresh_attempt_at)}
            {h.refresh_requested ? ' (a refresh is requested)' : ''}
          </dd>
          <dt>Failed refreshes in a row</dt>
          <dd>{h.consecutive_refresh_failures}</dd>
          <dt>Refresh token</dt>
          <dd>
            {h.rotation_class === 'oauth-single-use' ? 'replaced at every refresh' : 'kept across refreshes'}
          </dd>
        </>
      ) : (
        <>
          <dt>Credentials</dt>
          <dd>static keys: nothing to refresh</dd>
        </>
      )}
    </dl>
  );
}

function Manage({
  l,
  providers,
  act,
  onDeleted,
  onClose,
}: {
  l: Located;
  providers: readonly ProviderView[] | undefined;
  act: (work: () => Promise<unknown>, done: string) => Promise<boolean>;
  onDeleted: (label: string) => void;
  onClose: () => void;
}) {
  const name = visibleName(l.label);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [l.id]);
  return (
    <section class="panel" aria-labelledby="h-manage">
      <h2 id="h-manage" tabIndex={-1} ref={heading}>
        {name} ({l.provider})
      </h2>
      <h3>Health</h3>
      <Health l={l} />
      {!can('admin') ? (
        <>
          <Needs scope="admin" what="to refresh, rename, replace the secret of or delete a location" />
          <button type="button" onClick={onClose}>
            Close
          </button>
        </>
      ) : (
        <ManageActions l={l} providers={providers} act={act} onDeleted={onDeleted} onClose={onClose} />
      )}
    </section>
  );
}

/** What an admin key may do to a location: refresh, rename, replace the secret, delete. */
function ManageActions({
  l,
  providers,
  act,
  onDeleted,
  onClose,
}: {
  l: Located;
  /** Undefined while GET /v1/providers is answered: the secret's form waits for it. */
  providers: readonly ProviderView[] | undefined;
  act: (work: () => Promise<unknown>, done: string) => Promise<boolean>;
  onDeleted: (label: string) => void;
  onClose: () => void;
}) {
  const name = visibleName(l.label);
  const [label, setLabel] = useState(l.label);
  const [values, set, clear] = useValues();
  const [typed, setTyped] = useState('');
  const form = providers?.find((p) => p.id === l.provider);
  return (
    <>
      {l.health.rotation_class !== undefined ? (
        <button
          type="button"
          onClick={() =>
            void act(
              () => api('POST', '/v1/locations/refresh', { body: { id: l.id } }),
              `Refresh of ${name} requested.`,
            )
          }
        >
          Refresh now
        </button>
      ) : null}

      <h3>Rename</h3>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void act(
            () => api('PATCH', '/v1/locations', { body: { id: l.id, label } }),
            `Renamed to ${visibleName(label)}.`,
          );
        }}
      >
        <label for="rename-label">New label</label>
        <input
          id="rename-label"
          required
          maxLength={256}
          value={label}
          onInput={(e) => setLabel(e.currentTarget.value)}
        />
        <button type="submit">Rename</button>
      </form>

      {form ? (
        <>
          <h3>Replace the secret</h3>
          <form
            class="fields"
            onSubmit={(e) => {
              e.preventDefault();
              const secret = secretOf(form, values);
              clear();
              void act(
                () => api('PUT', '/v1/locations', { body: { id: l.id, secret } }),
                `The secret of ${name} was replaced.`,
              );
            }}
          >
            <p class="help">
              The new credentials take effect at the next operation; a failed or paused location becomes
              active again. Nothing is checked with the provider until then.
            </p>
            <Fields fields={form.secret} values={values} set={set} prefix="replace" />
            <div class="row">
              <button type="submit">Replace secret</button>
            </div>
          </form>
        </>
      ) : null}

      <h3>Delete</h3>
      <form
        class="fields"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed !== l.label) return;
          void act(() => api('DELETE', '/v1/locations', { body: { id: l.id } }), `${name} was deleted.`).then(
            (ok) => ok && onDeleted(l.label),
          );
        }}
      >
        <p id="delete-what">
          Deleting {name} forgets its credentials for good; the files in the storage itself are not touched.
          Its share links stop working and its sends are deleted with it, and transfers and jobs already
          accepted that use it fail when they run. This cannot be undone.
        </p>
        <div class="field">
          <label for="delete-confirm">Type {name} to confirm</label>
          <input
            id="delete-confirm"
            autocomplete="off"
            spellcheck={false}
            aria-describedby="delete-what"
            value={typed}
            onInput={(e) => setTyped(e.currentTarget.value)}
          />
        </div>
        <div class="row">
          <button type="submit" class="danger" disabled={typed !== l.label}>
            Delete {name}
          </button>
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </form>
    </>
  );
}

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
