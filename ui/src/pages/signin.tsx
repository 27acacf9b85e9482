// Sign in by pasting an API key: it is checked once (GET /v1/key, which any key may read, and which says
// what the key may do) and kept for this tab only.
import { useState } from 'preact/hooks';
import { storeKey } from '../api.js';
import { type KeyInfo, readKey } from '../scopes.js';
import { Alert, message } from './common.js';

export function SignIn({
  onKey,
  reason,
}: {
  onKey: (key: string, info: KeyInfo) => void;
  reason?: string | undefined;
}) {
  const [key, setKey] = useState('');
  // Why the console came back here by itself (the key was revoked or expired), until the next try.
  const [error, setError] = useState<string | undefined>(reason);
  const submit = async (e: Event) => {
    e.preventDefault();
    storeKey(key.trim());
    try {
      onKey(key.trim(), await readKey());
    } catch (err) {
      storeKey(null);
      setError(message(err));
    }
  };
  return (
    <main id="main" class="signin">
      <h1>ferry console</h1>
      <form onSubmit={submit}>
        <label for="key">API key</label>
        <input
          id="key"
          type="password"
          autocomplete="off"
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          aria-describedby="key-help"
        />
        <p id="key-help" class="help">
          Paste a key (fry_…). It is kept in this tab only and forgotten when the tab closes.
        </p>
        <button type="submit">Sign in</button>
      </form>
      <Alert error={error} />
    </main>
  );
}
