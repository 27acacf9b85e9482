// The form that creates a location (docs/api.md, "Locations"): a provider, a label, and the secret and
// settings that provider's store declares (location-fields.tsx).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ProviderView } from '../../../src/api/routes.js';
import { api } from '../api.js';
import { Alert, message } from './common.js';
import { Fields, metadataOf, secretOf, useValues } from './location-fields.js';

export function CreateForm({
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
