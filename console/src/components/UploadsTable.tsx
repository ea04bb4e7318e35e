import { useEffect } from 'preact/hooks';
import { get } from '../api.js';
import type { Upload } from '../types.js';
import { useAsync } from '../util.js';
import { Loadable } from './Status.js';
import { Time } from './Time.js';

const MiB = 1024 * 1024;
const WAITING = new Set(['receiving', 'accepted', 'processing']);

/** How far an upload got: bytes received, or bytes and records read while it is processed. */
function progressOf(u: Upload): string {
  if (u.status === 'processing' && u.progress) {
    const share = u.progress.bytes_total > 0 ? Math.round((u.progress.bytes_read / u.progress.bytes_total) * 100) : 0;
    return `${share} % read, ${u.progress.records_read.toLocaleString('en-US')} records`;
  }
  if (u.status === 'receiving') return 'arriving';
  if (u.status === 'accepted') return 'queued';
  return '';
}

const recordsOf = (u: Upload) =>
  Object.entries(u.records)
    .map(([kind, n]) => `${kind} ${n.toLocaleString('en-US')}`)
    .join(', ') || '—';

/**
 * The user's uploads and imports with their outcome (contracts §12), newest first; refreshed every
 * two seconds while one is still arriving, queued or being processed.
 */
export function UploadsTable({ base, tz }: { base: string; tz: string }) {
  const uploads = useAsync(() => get<{ data: Upload[] }>(`${base}/uploads`, { limit: 20 }), [base]);
  const busy = (uploads.data?.data ?? []).some((u) => WAITING.has(u.status));
  useEffect(() => {
    if (!busy) return;
    const timer = setTimeout(() => uploads.reload(), 2000);
    return () => clearTimeout(timer);
  }, [busy, uploads.data]);
  return (
    <section aria-labelledby="uploads-h" class="card">
      <h2 id="uploads-h">Uploads and imports</h2>
      <Loadable state={uploads} label="uploads">
        {(page) =>
          page.data.length === 0 ? (
            <p class="muted">No uploads yet.</p>
          ) : (
            <div class="scroll">
            <table data-testid="uploads">
              <thead>
                <tr>
                  <th>Received</th>
                  <th>Provider</th>
                  <th>Upload-Id</th>
                  <th>Size</th>
                  <th>Status</th>
                  <th>Progress</th>
                  <th>Records</th>
                  <th>Unchanged</th>
                  <th>Rejected</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((u) => (
                  <tr key={`${u.provider}/${u.upload_id}`} data-status={u.status}>
                    <td><Time at={u.received_at} tz={tz} /></td>
                    <td>{u.provider}</td>
                    <td>{u.upload_id}</td>
                    <td>{(u.bytes / MiB).toFixed(1)} MiB</td>
                    <td title={u.error ?? undefined}>{u.status}{u.error ? `: ${u.error}` : ''}</td>
                    <td>{progressOf(u)}</td>
                    <td>{recordsOf(u)}</td>
                    <td>{u.unchanged.toLocaleString('en-US')}</td>
                    <td title={u.rejections.map((r) => `${r.at}: ${r.reason}`).join('\n') || undefined}>{u.rejected.toLocaleString('en-US')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            </div>
          )
        }
      </Loadable>
    </section>
  );
}
