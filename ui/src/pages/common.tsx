// Pieces every page uses: an error or notice line, and a hook that loads from the API.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';

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

/** Loads `read()` now and on reload(); its error as a message. */
export function useLoad<T>(read: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const reload = useCallback(() => {
    setLoading(true);
    read().then(
      (d) => {
        setData(d);
        setError(undefined);
        setLoading(false);
      },
      (err: unknown) => {
        setData(undefined);
        setError(message(err));
        setLoading(false);
      },
    );
  }, deps);
  useEffect(reload, [reload]);
  return { data, error, loading, reload, setError };
}
