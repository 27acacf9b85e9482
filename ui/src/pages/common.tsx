// Pieces every page uses: an error or notice line, and a hook that loads from the API.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';

export function Alert({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <p class="alert" role="alert">
      {error}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <div class="notice" role="status">
      {children}
    </div>
  );
}

export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
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
  const reload = useCallback(() => {
    setState((s) => ({ ...s, loading: true }));
    const settle = (next: { data?: T; error?: string }) =>
      setState((s) => (latest.current === current ? { for: current, ...next, loading: false } : s));
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
