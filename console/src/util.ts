import { useEffect, useState } from 'preact/hooks';

export type Async<T> = { loading: boolean; error: string | null; data: T | null; reload: () => void };

/**
 * Runs `load` whenever a dependency changes. An answer is shown only for the dependencies it was
 * loaded for: while a new query runs the page says "loading", never the last query's numbers under
 * the new query's labels.
 */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [tick, setTick] = useState(0);
  const key = JSON.stringify([...deps, tick]);
  const [state, setState] = useState<{ key: string; error: string | null; data: T | null }>({ key: '', error: null, data: null });
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setState({ key, error: null, data }),
      (err: unknown) => live && setState({ key, error: err instanceof Error ? err.message : String(err), data: null }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  const current = state.key === key;
  return { loading: !current, error: current ? state.error : null, data: current ? state.data : null, reload: () => setTick((t) => t + 1) };
}

export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}
