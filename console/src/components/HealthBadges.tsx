import { fmtLag, fmtTime } from '../format.js';
import type { Connection, Freshness } from '../types.js';
import { Badge } from './Status.js';
import { Time } from './Time.js';

/** What the operator (or the user) must do about a source, from its freshness state and connection health. */
export function actionFor(f: Freshness | undefined, c: Connection | undefined): string {
  if (c?.health.action === 'reconnect' || c?.status === 'needs_reauth' || f?.state === 'needs_reauth') return 'The user must reconnect this provider (consent expired or was revoked).';
  if (c?.status === 'disconnected' || f?.state === 'disconnected') return 'Disconnected: the user must connect it again for new data.';
  if (c && !c.health.healthy) return c.health.action ? `${c.health.action.replace(/_/g, ' ')}${c.health.retry_at ? ` (next try ${fmtTime(c.health.retry_at)})` : ''}.` : 'Wait: the service retries by itself.';
  switch (f?.state) {
    case 'failing':
      return 'A job failed or is parked: see Pipeline (retry once the cause is fixed).';
    case 'stale':
      return 'Nothing received for 48 hours: ask the user to open their app or sync the device.';
    case 'syncing':
      return 'Data is being processed: wait.';
    default:
      return 'None.';
  }
}

export function HealthBadges({ freshness, connections }: { freshness: Freshness[]; connections: Connection[] }) {
  const providers = [...new Set([...freshness.map((f) => f.provider), ...connections.map((c) => c.provider)])].sort();
  if (providers.length === 0) return <p class="muted">No sources yet: no data and no connections.</p>;
  return (
    <div class="scroll">
      <table data-testid="health-table">
        <caption class="sr-only">Freshness and connection health per source</caption>
        <thead>
          <tr>
            <th scope="col">Source</th>
            <th scope="col">Freshness</th>
            <th scope="col">Synced through</th>
            <th scope="col">Lag</th>
            <th scope="col">Connection</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {providers.map((p) => {
            const f = freshness.find((x) => x.provider === p);
            const c = connections.find((x) => x.provider === p);
            return (
              <tr key={p} data-provider={p}>
                <th scope="row">
                  {p}
                  {f && <span class="muted"> ({f.kind})</span>}
                </th>
                <td data-field="state">{f ? <Badge state={f.state} /> : '—'}</td>
                <td><Time at={f?.synced_through} /></td>
                <td data-field="lag_seconds" data-value={f?.lag_seconds ?? ''} title={f?.lag_seconds != null ? `${f.lag_seconds} s` : undefined}>
                  {fmtLag(f?.lag_seconds)}
                </td>
                <td data-field="connection">
                  {c ? (
                    <>
                      <Badge state={c.status} /> {c.health.healthy ? <Badge state="healthy" /> : <Badge state="failing" label={c.health.reason ?? 'unhealthy'} />}
                    </>
                  ) : (
                    <span class="muted">none</span>
                  )}
                </td>
                <td data-field="action">
                  {actionFor(f, c)}
                  {f?.last_error && <div class="error-text">Last error: {f.last_error}</div>}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
