// Pieces every page uses: an error or notice line, and a hook that loads from the API.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { keyInfo, lacking, SCOPE_WORDS, type Scope } from '../scopes.js';

/**
 * The technical detail of the sentences message() gave lately (ApiError.detail), so that an Alert shown
 * with only the sentence, as every page does, still has it one click away. The last few are kept.
 */
const details = new Map<string, string>();
const DETAILS_KEPT = 20;

/**
 * An error as a sentence in words (ApiError's message, api.ts), with the technical detail (the status,
 * ferry's message) in a <details> under it: given as `detail`, or found for a sentence message() made.
 */
export function Alert({ error, detail }: { error: string | undefined; detail?: string | undefined }) {
  if (!error) return null;
  const more = detail ?? details.get(error);
  return (
    <div class="alert" role="alert">
      <p>{error}</p>
      {more ? (
        <details>
          <summary>Technical detail</summary>
          <p class="small">{more}</p>
        </details>
      ) : null}
    </div>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <div class="notice" role="status">
      {children}
    </div>
  );
}

/** The sentence for an error; an ApiError's detail is kept for the Alert that shows it. */
export function message(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  if (err instanceof ApiError && err.detail && err.detail !== text) {
    details.delete(text);
    details.set(text, err.detail);
    if (details.size > DETAILS_KEPT) details.delete(details.keys().next().value as string);
  }
  return text;
}

/**
 * Loads `read()` now, again when `deps` change, and on reload(); its error as a message. What was loaded
 * for other `deps` (the folder before this one) is never shown, and an answer that comes back after the
 * deps changed is dropped: a slow listing of one folder cannot fill the page of the next.
 */
export function useLoad<T>(read: () => Promise<T>, deps: unknown[]) {
  // A new object each time the deps change: the identity of what is being loaded.
  const current = useMemo(() => ({}), deps);
  const latest = useRef(current);
  latest.current = current;
  const [state, setState] = useState<{
    for?: object;
    data?: T | undefined;
    error?: string | undefined;
    loading: boolean;
  }>({
    loading: true,
  });
  // Each load is numbered: of two loads for the same deps (a reload after each finished upload), only the
  // last one asked settles, so a slow earlier answer cannot put back a listing without the newer files.
  const asked = useRef(0);
  const reload = useCallback(() => {
    const mine = ++asked.current;
    setState((s) => ({ ...s, loading: true }));
    const settle = (next: { data?: T; error?: string }) =>
      setState((s) =>
        latest.current === current && asked.current === mine ? { for: current, ...next, loading: false } : s,
      );
    read().then(
      (data) => settle({ data }),
      (err: unknown) => settle({ error: message(err) }),
    );
  }, [current]);
  useEffect(reload, [reload]);
  const setError = useCallback(
    (error: string | undefined) => setState((s) => ({ ...s, for: current, error })),
    [current],
  );
  const mine = state.for === current;
  return {
    data: mine ? state.data : undefined,
    error: mine ? state.error : undefined,
    loading: !mine || state.loading,
    reload,
    setError,
  };
}

/**
 * A progress bar with its words beside it (and any buttons, such as Cancel): the one shape of every
 * bar of the console (jobs and transfers, uploads and downloads). `tone` colours work that ended badly:
 * failed, partial or canceled.
 */
export function ProgressBar({
  label,
  pct,
  words,
  tone = '',
  children,
}: {
  label: string;
  pct: number;
  words: string;
  tone?: string;
  children?: ComponentChildren;
}) {
  return (
    <div class={`bar ${tone}`.trim()}>
      <progress max={100} value={pct} aria-label={label} aria-valuetext={words} />
      <span>{words}</span>
      {children}
    </div>
  );
}

/** The signed-in key's scopes as words: "read, share". */
export const scopesWord = () => keyInfo()?.scopes.join(', ') || 'none';

/**
 * In the header, for a key with fewer than every scope: what it can do, and, one click away, why the
 * other actions are not offered and which scope each needs (docs/console.md, "Keys with fewer scopes").
 */
export function KeyScopes() {
  const missing = lacking();
  const places = keyInfo()?.locations;
  if (missing.length === 0 && places === undefined) return null;
  return (
    <details class="scopes">
      <summary>
        This key can: {scopesWord()}
        {places === undefined ? '' : `, at ${places.length} location${places.length === 1 ? '' : 's'}`}
      </summary>
      <div class="scopes-why">
        {places !== undefined && (
          <p>
            This API key is limited to some locations: the console shows only them and the work that touches
            only them. Adding a location, webhooks and the audit log act on the whole workspace and are not
            offered.
          </p>
        )}
        {missing.length > 0 && (
          <p>
            The console offers only what this API key may do. Other actions need a key with another scope;
            sign out and sign in with such a key (one with the admin scope makes keys on the API keys page):
          </p>
        )}
        {missing.length > 0 && (
          <ul>
            {missing.map((s) => (
              <li key={s}>
                <strong>{s}</strong>: {SCOPE_WORDS[s]}
              </li>
            ))}
          </ul>
        )}
      </div>
    </details>
  );
}

/** In place of a page that acts on the whole workspace, for a key limited to some locations. */
export function WholeWorkspace({ what }: { what: string }) {
  return (
    <p class="needs">
      This API key is limited to some locations, and {what} acts on the whole workspace. Sign in with a key
      without a location limit to use it.
    </p>
  );
}

/**
 * In place of a page (or a part of one) the signed-in key cannot use at all: which scope it needs, what
 * for, and what the key has, instead of requests that would be refused.
 */
export function Needs({ scope, what }: { scope: Scope; what: string }) {
  return (
    <p class="needs">
      This needs an API key with the <strong>{scope}</strong> scope ({what}); the key you signed in with can:{' '}
      {scopesWord()}. Sign in with a key that has {scope} to use it.
    </p>
  );
}
