import { fmtLag, fmtTime } from '../format.js';
import type { Connection, Freshness } from '../types.js';
import { Badge } from './Status.js';
import { Time } from './Time.js';
import { ScrollBox } from './ScrollBox.js';

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

/** contracts §6: a source is `stale` after 48 hours without receiving anything. */
const RECENT_S = 48 * 3600;

/**
 * The freshness state as a badge. The API's `fresh` says data was received lately; when the newest
 * record is itself older than the stale threshold the data is old data just imported (an export's
 * years of history, issue 36), so it reads "imported", never "fresh" beside a lag of years.
 */
export function freshnessLabel(f: Freshness): string {
  return f.state === 'fresh' && f.lag_seconds !== null && f.lag_seconds >= RECENT_S ? 'imported' : f.state;
}

function FreshnessBadge({ f }: { f: Freshness }) {
  const label = freshnessLabel(f);
  return (
    <span data-state={f.state} title={label === f.state ? undefined : `Received ${fmtTime(f.last_received_at)}; its newest record ends ${fmtTime(f.synced_through)}, ${fmtLag(f.lag_seconds)} ago`}>
      <Badge state={label} />
    </span>
  );
}

/** Columns that say what to do lead (issue 36: on a phone they were past the edge); the lag and its time follow. */
export function HealthBadges({ freshness, connections }: { freshness: Freshness[]; connections: Connection[] }) {
  const providers = [...new Set([...freshness.map((f) => f.provider), ...connections.map((c) => c.provider)])].sort();
  if (providers.length === 0) return <p class="muted">No sources yet: no data and no connections.</p>;
  return (
    <ScrollBox>
      <table data-testid="health-table">
        <caption class="sr-only">Freshness and connection health per source</caption>
        <thead>
          <tr>
            <th scope="col">Source</th>
            <th scope="col">Freshness</th>
            <th scope="col">Connection</th>
            <th scope="col">Action</th>
            <th scope="col">Lag</th>
            <th scope="col">Synced through</th>
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
                <td data-field="state">{f ? <FreshnessBadge f={f} /> : '—'}</td>
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
                <td data-field="lag_seconds" data-value={f?.lag_seconds ?? ''} title={f?.lag_seconds != null ? `${f.lag_seconds} s` : undefined}>
                  {fmtLag(f?.lag_seconds)}
                </td>
                <td><Time at={f?.synced_through} /></td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollBox>
  );
}
