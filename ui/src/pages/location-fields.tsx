// A provider's secret and metadata fields as form inputs, for the forms that create a location and
// replace its secret. The fields are as GET /v1/providers ("Providers") says each provider's store
// declares them, and this file names none of them (test/layering/ checks).
import { useState } from 'preact/hooks';
import type { ProviderField, ProviderView } from '../../../src/api/routes.js';
import { api } from '../api.js';

/** Every provider with its secret and metadata fields, as its store declares them (GET /v1/providers). */
export async function loadProviders(): Promise<ProviderView[]> {
  return (await api('GET', '/v1/providers')).providers;
}

type Values = Record<string, string>;

/** The secret as the API takes it: every field as typed (a key file as its JSON text). */
export function secretOf(form: ProviderView, values: Values): Record<string, string> {
  return Object.fromEntries(form.secret.map((f) => [f.key, values[f.key] ?? '']));
}

/** The metadata fields given (empty ones left out), or undefined when none is. */
export function metadataOf(form: ProviderView, values: Values): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const f of form.metadata) {
    const v = (values[f.key] ?? '').trim();
    if (!v) continue;
    out[f.key] = f.type === 'boolean' ? v === 'yes' : v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The inputs of some fields; `prefix` keeps their ids apart from another form's on the page. */
export function Fields({
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
export function useValues(): [Values, (key: string, value: string) => void, (keep?: string[]) => void] {
  const [values, setValues] = useState<Values>({});
  const set = (key: string, value: string) => setValues((v) => ({ ...v, [key]: value }));
  const clear = (keep: string[] = []) =>
    setValues((v) => Object.fromEntries(keep.map((k) => [k, v[k] ?? ''])));
  return [values, set, clear];
}
