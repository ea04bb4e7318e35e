import { useEffect } from 'preact/hooks';
import { get } from '../api.js';
import type { Upload } from '../types.js';
import { useAsync } from '../util.js';
import { formatBytes } from '../../../src/shared/byteSize.js';
import { Excerpt } from './Excerpt.js';
import { Badge, Loadable } from './Status.js';
import { Time } from './Time.js';
import { ScrollBox } from './ScrollBox.js';
import { plural } from '../format.js';

const WAITING = new Set(['receiving', 'accepted', 'processing']);

/** How far an upload got: bytes received, or bytes and records read while it is processed. */
function progressOf(u: Upload): string {
  if (u.status === 'processing' && u.progress) {
    const share = u.progress.bytes_total > 0 ? Math.round((u.progress.bytes_read / u.progress.bytes_total) * 100) : 0;
    return `${share} % read, ${plural(u.progress.records_read, 'record')}`;
  }
  if (u.status === 'receiving') return 'arriving';
  if (u.status === 'accepted') return 'queued';
  return '';
}

/** The records stored, in all and by kind ("68: quantity 26, category 22, …"). */
function recordsOf(u: Upload) {
  const kinds = Object.entries(u.records);
  if (kinds.length === 0) return '—';
  const total = kinds.reduce((sum, [, n]) => sum + n, 0);
  return (
    <>
      <strong>{total.toLocaleString('en-US')}</strong>
      <span class="muted">: {kinds.map(([kind, n]) => `${kind} ${n.toLocaleString('en-US')}`).join(', ')}</span>
    </>
  );
}

/**
 * The user's uploads and imports with their outcome (contracts §12), newest first; refreshed every
 * two seconds while one is still arriving, queued or being processed. The outcome (status, records,
 * rejected) leads, so a phone shows it without scrolling the table (issue 36).
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
            <ScrollBox>
            <table data-testid="uploads">
              <thead>
                <tr>
                  <th scope="col">Status</th>
                  <th scope="col">Records</th>
                  <th scope="col">Rejected</th>
                  <th scope="col">Received ({tz})</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Progress</th>
                  <th scope="col">Unchanged</th>
                  <th scope="col">Size</th>
                  <th scope="col">Upload-Id</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((u) => (
                  <tr key={`${u.provider}/${u.upload_id}`} data-status={u.status}>
                    <td data-field="status" class="outcome">
                      <Badge state={u.status} />
                      {u.error && <div class="error-text"><Excerpt text={u.error} keep={60} /></div>}
                    </td>
                    <td data-field="records" class="records">{recordsOf(u)}</td>
                    <td data-field="rejected" title={u.rejections.map((r) => `${r.at}: ${r.reason}`).join('\n') || undefined}>{u.rejected.toLocaleString('en-US')}</td>
                    <td><Time at={u.received_at} tz={tz} /></td>
                    <td>{u.provider}</td>
                    <td>{progressOf(u)}</td>
                    <td>{u.unchanged.toLocaleString('en-US')}</td>
                    <td data-field="bytes" data-value={u.bytes}>{formatBytes(u.bytes)}</td>
                    <td class="mono id">{u.upload_id}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            </ScrollBox>
          )
        }
      </Loadable>
    </section>
  );
}
