import { useState } from 'preact/hooks';
import { api, enc, get, type Page } from '../api.js';
import { OutcomeLine, useAction } from '../components/Action.js';
import { Excerpt } from '../components/Excerpt.js';
import { Badge, Loadable } from '../components/Status.js';
import { Time } from '../components/Time.js';
import { fmtTime, plural } from '../format.js';
import type { Delivery } from '../types.js';
import { useAsync } from '../util.js';
import { ScrollBox } from '../components/ScrollBox.js';

/** A delivery is final once delivered (done) or given up on (parked): only then may it be replayed; a pending one is still being retried. */
const isFinal = (d: Delivery) => d.status === 'done' || d.status === 'parked';

/** What the endpoint answered last: its status code, or that it gave none (a time-out, a refused connection). */
const answerOf = (d: Delivery) => (d.last_status_code !== null ? `HTTP ${d.last_status_code}` : d.attempts ? 'no answer' : '');

/** "YYYY-MM-DD HH:MM" (UTC) as an instant, or null. */
function utcMinute(text: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/.test(text)) return null;
  const ms = Date.parse(`${text.replace(' ', 'T')}:00Z`);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 16) !== text.replace(' ', 'T') ? null : new Date(ms).toISOString();
}

/**
 * The deliveries of one endpoint (named in the heading), newest first, 50 a page, with replay,
 * recover and a test event. Each row says when, what, its status, its attempts and the endpoint's
 * last answer (issue 36: a row showed little more than the event type).
 */
export function Deliveries({ webhookId, url }: { webhookId: string; url: string | undefined }) {
  const base = `/v1/webhooks/${enc(webhookId)}`;
  const [status, setStatus] = useState('');
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const deliveries = useAsync(() => get<Page<Delivery>>(`${base}/deliveries`, { status, cursor, limit: 50 }), [webhookId, status, cursor]);
  const [since, setSince] = useState(() => new Date(Date.now() - 86_400_000).toISOString().slice(0, 16).replace('T', ' '));
  const sinceAt = utcMinute(since);
  const { outcome, act } = useAction(deliveries.reload);
  return (
    <section aria-labelledby="deliveries-h" class="card">
      <h2 id="deliveries-h">Deliveries{url ? <> to <span class="url-text">{url}</span></> : ''}</h2>
      <div class="toolbar">
        <label>
          Status{' '}
          <select aria-label="Status" value={status} onChange={(e) => { setStatus(e.currentTarget.value); setCursor(undefined); }}>
            <option value="">any</option>
            {['pending', 'running', 'done', 'parked'].map((s) => (
              <option key={s} value={s}>{s}</option>
            ))}
          </select>
        </label>
        <form class="inline" onSubmit={(e) => { e.preventDefault(); if (sinceAt) void act(async () => { const r = await api<{ replayed: number }>('POST', `${base}/recover`, { since: sinceAt }); return `Recovered: ${plural(r.replayed, 'parked delivery', 'parked deliveries')} replayed.`; }); }}>
          <label>
            Recover parked deliveries since (UTC){' '}
            <input type="text" inputMode="numeric" pattern="\d{4}-\d{2}-\d{2} \d{2}:\d{2}" placeholder="YYYY-MM-DD HH:MM" size={16} value={since} onInput={(e) => setSince(e.currentTarget.value.trim())} required aria-invalid={sinceAt ? undefined : true} />
          </label>
          <button type="submit" class="secondary" disabled={!sinceAt}>Recover</button>
        </form>
        <button type="button" class="secondary" onClick={() => void act(async () => { const d = await api<Delivery>('POST', `${base}/test`); return `Test event queued as delivery ${d.id}.`; })}>
          Send test event
        </button>
      </div>
      <OutcomeLine outcome={outcome} />
      <Loadable state={deliveries} label="deliveries">
        {(page) =>
          page.data.length === 0 ? (
            <p class="muted">No deliveries{status ? ` with status ${status}` : ''}.</p>
          ) : (
            <>
              <ul class="deliveries" data-testid="deliveries">
                {page.data.map((d) => (
                  <li key={d.id} data-delivery-id={d.id}>
                    <div class="row">
                      <span data-field="created_at"><Time at={d.created_at} /></span> <strong>#{d.id}</strong> <span data-field="event_type">{d.event_type}</span> <span data-field="status"><Badge state={d.status} /></span>
                      <span data-field="attempts">{d.attempts ? plural(d.attempts, 'attempt') : 'no attempt yet'}</span>
                      <span data-field="last_status_code">{answerOf(d)}</span>
                      <span class="muted">{d.delivered_at ? <>delivered <Time at={d.delivered_at} /></> : ''}{d.replay_of ? ` · replay of #${d.replay_of}` : ''}{!isFinal(d) && d.next_attempt_at ? ` · next attempt ${fmtTime(d.next_attempt_at)}` : ''}</span>
                      {isFinal(d) ? (
                        <button type="button" class="small" onClick={() => void act(async () => { const r = await api<Delivery>('POST', `${base}/deliveries/${d.id}/replay`); return `Replayed as delivery ${r.id}.`; })} aria-label={`Replay delivery ${d.id}`}>
                          Replay
                        </button>
                      ) : (
                        <span class="muted" data-field="replay">replay once final (still {d.status})</span>
                      )}
                    </div>
                    {d.last_error && <div class="error-text">Last error: {d.last_error}</div>}
                    <details>
                      <summary>Attempts ({d.attempt_history.length})</summary>
                      {d.attempt_history.length === 0 ? (
                        <p class="muted">No attempt yet{d.next_attempt_at ? `; next at ${fmtTime(d.next_attempt_at)}` : ''}.</p>
                      ) : (
                        <ScrollBox>
                          <table>
                            <caption class="sr-only">Attempts of delivery {d.id}, oldest first</caption>
                            <thead><tr><th scope="col">#</th><th scope="col">Started</th><th scope="col">Status code</th><th scope="col">Duration (ms)</th><th scope="col">Error or answer</th></tr></thead>
                            <tbody>
                              {d.attempt_history.map((a) => (
                                <tr key={a.id}><td>{a.attempt}</td><td><Time at={a.started_at} /></td><td>{a.status_code ?? '—'}</td><td>{a.duration_ms}</td><td class="excerpt"><Excerpt text={a.error ?? a.response_body_excerpt} /></td></tr>
                              ))}
                            </tbody>
                          </table>
                        </ScrollBox>
                      )}
                    </details>
                  </li>
                ))}
              </ul>
              <p>
                {cursor && <button type="button" class="secondary" onClick={() => setCursor(undefined)}>Newest</button>}{' '}
                {page.next_cursor && <button type="button" class="secondary" onClick={() => setCursor(page.next_cursor!)}>Older</button>}
              </p>
            </>
          )
        }
      </Loadable>
    </section>
  );
}
