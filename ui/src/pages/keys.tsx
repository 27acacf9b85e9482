// API keys (docs/api.md, "API keys"): create (the key shown once), rename, revoke.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { time } from '../format.js';
import { Alert, message, Notice, useLoad } from './common.js';

interface Key {
  id: string;
  name: string;
  created_at: string;
  expires_at?: string;
  last_used_at?: string;
  revoked_at?: string;
}

export function Keys() {
  const { data, error, reload } = useLoad(() => api<Key[]>('GET', '/v1/tokens'), []);
  const [name, setName] = useState('');
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
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            const k = await api<{ token: string }>('POST', '/v1/tokens', { name });
            setCreated(k.token);
            setName('');
          });
        }}
      >
        <label for="key-name">New key name</label>
        <input id="key-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit">Create key</button>
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
      <table>
        <caption class="sr-only">API keys of this workspace</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {(data ?? []).map((k) => (
            <tr key={k.id}>
              <th scope="row">{k.name}</th>
              <td data-label="Created">{time(k.created_at)}</td>
              <td data-label="Last used">{time(k.last_used_at)}</td>
              <td data-label="State">
                {k.revoked_at
                  ? `revoked ${time(k.revoked_at)}`
                  : k.expires_at
                    ? `expires ${time(k.expires_at)}`
                    : 'active'}
              </td>
              <td class="actions" data-label="">
                <button
                  type="button"
                  aria-label={`Rename ${k.name}`}
                  onClick={() => {
                    const to = prompt(`New name for ${k.name}`, k.name);
                    if (to) void act(() => api('PATCH', `/v1/tokens/${k.id}`, { name: to }));
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
                        void act(() => api('DELETE', `/v1/tokens/${k.id}`));
                    }}
                  >
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
