// API keys (docs/api.md, "API keys" and "Scopes"): create one with the scopes ticked and, if it should
// act only there, the locations ticked (the key shown once); rename, revoke; each key's scopes and
// locations in the list. A key without admin sees why it cannot use this.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiKey, LocationSummary } from '../../../src/api/routes.js';
import { api } from '../api.js';
import { time } from '../format.js';
import { can, keyInfo, limitedToLocations, SCOPE_WORDS, type Scope } from '../scopes.js';
import { Alert, message, Needs, Notice, useLoad } from './common.js';
import { actions, Table } from './table.js';

export function Keys() {
  return can('admin') ? (
    <KeyList />
  ) : (
    <section aria-labelledby="h-keys">
      <h1 id="h-keys">API keys</h1>
      <Needs scope="admin" what="to list, create, rename and revoke API keys" />
    </section>
  );
}

function KeyList() {
  const { data, error, reload } = useLoad(() => api('GET', '/v1/tokens'), []);
  const [name, setName] = useState('');
  // A new key may have only scopes the signed-in key has (docs/api.md, "Scopes"): those are offered,
  // and only read is ticked to begin with, the least a key does; the form says so. Each other scope is
  // ticked on purpose.
  const own = keyInfo()?.scopes ?? [];
  const least = own.filter((x) => x === 'read');
  const [scopes, setScopes] = useState<Scope[]>(least);
  // And only where the signed-in key may act: a key limited to some locations makes keys limited to
  // some of them; GET /v1/locations answers exactly those (it needs read).
  const places = useLoad(
    (): Promise<LocationSummary[]> => (can('read') ? api('GET', '/v1/locations') : Promise.resolve([])),
    [],
  );
  const mustLimit = limitedToLocations();
  const [everywhere, setEverywhere] = useState(!mustLimit);
  const [chosen, setChosen] = useState<string[]>([]);
  const labels = new Map((places.data ?? []).map((l) => [l.id, l.label]));
  const at = (ids: string[]) =>
    ids.length <= 3 && ids.every((id) => labels.has(id))
      ? ids.map((id) => labels.get(id)).join(', ')
      : `${ids.length} location${ids.length === 1 ? '' : 's'}`;
  const picked = (places.data ?? []).filter((l) => chosen.includes(l.id)).map((l) => l.id);
  const granted = own.filter((x) => scopes.includes(x));
  const ready = granted.length > 0 && (everywhere || picked.length > 0);
  const [created, setCreated] = useState<string | undefined>(undefined);
  const [failed, setFailed] = useState<string | undefined>(undefined);
  // The new key takes the focus (and is selected) so it can be copied at once; Done or Escape puts the
  // focus back on the name field it came from.
  const secret = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (created) secret.current?.focus();
  }, [created]);
  const done = () => {
    setCreated(undefined);
    document.getElementById('key-name')?.focus();
  };
  const act = async (work: () => Promise<unknown>) => {
    try {
      await work();
      setFailed(undefined);
      reload();
    } catch (err) {
      setFailed(message(err));
    }
  };
  return (
    <section aria-labelledby="h-keys">
      <h1 id="h-keys">API keys</h1>
      <Alert error={error ?? failed} />
      <form
        class="fields"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            const k = await api('POST', '/v1/tokens', {
              body: { name, scopes: granted, ...(everywhere ? {} : { locations: picked }) },
            });
            setCreated(k.token);
            setName('');
            setScopes(least);
            setEverywhere(!mustLimit);
            setChosen([]);
          });
        }}
      >
        <div class="row">
          <label for="key-name">New key name</label>
          <input id="key-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <fieldset class="scope-choice">
          <legend>What the new key may do</legend>
          <p class="small" id="key-scope-least">
            {least.length
              ? 'Only read is ticked to begin with: tick each other thing the new key needs to do.'
              : 'Tick what the new key needs to do.'}
          </p>
          {own.map((x) => (
            <div class="check" key={x}>
              <input
                type="checkbox"
                id={`key-scope-${x}`}
                checked={scopes.includes(x)}
                aria-describedby={`key-scope-${x}-help`}
                onChange={(e) => {
                  const on = e.currentTarget.checked;
                  setScopes((list) => (on ? [...list, x] : list.filter((y) => y !== x)));
                }}
              />
              <label for={`key-scope-${x}`}>{x}</label>
              <span class="small" id={`key-scope-${x}-help`}>
                {SCOPE_WORDS[x]}
              </span>
            </div>
          ))}
        </fieldset>
        <fieldset class="scope-choice">
          <legend>Where the new key may act</legend>
          {!mustLimit && (
            <div class="check">
              <input
                type="radio"
                name="key-where"
                id="key-where-all"
                checked={everywhere}
                aria-describedby="key-where-all-help"
                onChange={() => setEverywhere(true)}
              />
              <label for="key-where-all">Every location</label>
              <span class="small" id="key-where-all-help">
                and what concerns the whole workspace (new locations, webhooks, the audit log)
              </span>
            </div>
          )}
          <div class="check">
            <input
              type="radio"
              name="key-where"
              id="key-where-some"
              checked={!everywhere}
              aria-describedby="key-where-some-help"
              onChange={() => setEverywhere(false)}
            />
            <label for="key-where-some">Only the locations ticked</label>
            <span class="small" id="key-where-some-help">
              {mustLimit ? 'as the key signed in with acts only at its own; ' : ''}any other does not exist
              for the new key
            </span>
          </div>
          {!everywhere &&
            (places.error ? (
              <p class="small">{places.error}</p>
            ) : !can('read') ? (
              <p class="small">Listing the locations needs the read scope.</p>
            ) : (
              <ul class="places">
                {(places.data ?? []).map((l) => (
                  <li class="check" key={l.id}>
                    <input
                      type="checkbox"
                      id={`key-at-${l.id}`}
                      checked={chosen.includes(l.id)}
                      onChange={(e) => {
                        const on = e.currentTarget.checked;
                        setChosen((list) => (on ? [...list, l.id] : list.filter((y) => y !== l.id)));
                      }}
                    />
                    <label for={`key-at-${l.id}`}>{l.label}</label>
                  </li>
                ))}
              </ul>
            ))}
        </fieldset>
        <div class="row">
          <button type="submit" disabled={!ready} aria-describedby="key-create-help">
            Create key
          </button>
          <span class="help" id="key-create-help">
            {scopes.length === 0
              ? 'Tick at least one scope.'
              : !everywhere && picked.length === 0
                ? 'Tick at least one location.'
                : `It may: ${granted.join(', ')}${everywhere ? '' : `; at ${at(picked)} only`}.`}
          </span>
        </div>
      </form>
      {created && (
        <Notice>
          <p>The new key, shown only now: copy it somewhere safe.</p>
          <input
            ref={secret}
            readOnly
            class="secret"
            aria-label="New API key"
            value={created}
            onFocus={(e) => e.currentTarget.select()}
            onKeyDown={(e) => {
              if (e.key === 'Escape') done();
            }}
          />
          <button type="button" onClick={done}>
            Done
          </button>
        </Notice>
      )}
      <Table
        caption="API keys of this workspace"
        class="keys"
        columns={[
          { name: 'Name', cell: (k) => k.name },
          {
            name: 'Scopes',
            cell: (k) =>
              `${k.scopes.join(', ')}${k.locations === undefined ? '' : `; at ${at(k.locations)} only`}`,
          },
          { name: 'Created', cell: (k) => time(k.created_at) },
          { name: 'Last used', cell: (k) => time(k.last_used_at) },
          {
            name: 'State',
            cell: (k) =>
              k.revoked_at
                ? `revoked ${time(k.revoked_at)}`
                : k.expires_at
                  ? `expires ${time(k.expires_at)}`
                  : 'active',
          },
          actions<ApiKey>(
            (k) => (
              <>
                <button
                  type="button"
                  aria-label={`Rename ${k.name}`}
                  onClick={() => {
                    const to = prompt(`New name for ${k.name}`, k.name);
                    if (to) void act(() => api('PATCH', '/v1/tokens/{id}', { id: k.id, body: { name: to } }));
                  }}
                >
                  Rename
                </button>
                {!k.revoked_at && (
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Revoke ${k.name}`}
                    onClick={() => {
                      if (confirm(`Revoke the key ${k.name}? Clients using it stop at once.`))
                        void act(() => api('DELETE', '/v1/tokens/{id}', { id: k.id }));
                    }}
                  >
                    Revoke
                  </button>
                )}
              </>
            ),
            '',
          ),
        ]}
        rows={data ?? []}
        rowKey={(k) => k.id}
      />
    </section>
  );
}
