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

export const isoDay = (d: Date) => d.toISOString().slice(0, 10);

export function daysBack(n: number, now = new Date()): { start: string; end: string } {
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
  const start = new Date(end.getTime() - n * 86_400_000);
  return { start: isoDay(start), end: isoDay(end) };
}

/** A time as the operator reads it: in the chosen zone, to the minute. */
export function fmtTime(iso: string | null | undefined, tz = 'UTC'): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return new Intl.DateTimeFormat('en-GB', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(d);
}

export function fmtDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const h = Math.floor(seconds / 3600);
  const m = Math.round((seconds % 3600) / 60);
  return h ? `${h} h ${m} min` : `${m} min`;
}

/** Numbers as the API answers them, rounded for reading only where the value has a fraction. */
export function fmtNum(n: number | null | undefined, digits = 1): string {
  if (n === null || n === undefined) return '—';
  return Number.isInteger(n) ? String(n) : n.toFixed(digits);
}

export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}
