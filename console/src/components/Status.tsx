import type { ComponentChildren } from 'preact';
import type { Async } from '../util.js';

/** Loading and error states read out to screen readers; children render once data is there. */
export function Loadable<T>({ state, children, label }: { state: Async<T>; label: string; children: (data: T) => ComponentChildren }) {
  if (state.error)
    return (
      <p role="alert" class="error">
        Could not load {label}: {state.error}
      </p>
    );
  if (state.data === null)
    return (
      <p role="status" class="muted">
        Loading {label}…
      </p>
    );
  return <>{children(state.data)}</>;
}

const TONE: Record<string, string> = {
  fresh: 'ok',
  active: 'ok',
  healthy: 'ok',
  done: 'ok',
  succeeded: 'ok',
  syncing: 'info',
  imported: 'info',
  receiving: 'info',
  accepted: 'info',
  processing: 'info',
  pending: 'info',
  running: 'info',
  queued: 'info',
  stale: 'warn',
  retrying: 'warn',
  rate_limited: 'warn',
  failing: 'bad',
  parked: 'bad',
  failed: 'bad',
  needs_reauth: 'bad',
  disabled: 'bad',
  disconnected: 'muted',
  cancelled: 'muted',
};

/** A state as a word with a colour; the word carries the meaning, the colour only repeats it. */
export function Badge({ state, label }: { state: string; label?: string }) {
  return <span class={`badge ${TONE[state] ?? 'muted'}`}>{label ?? state.replace(/_/g, ' ')}</span>;
}
