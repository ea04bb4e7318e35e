import { useState } from 'preact/hooks';
import { api, enc, get, type Page } from '../api.js';
import { OutcomeLine, useAction } from '../components/Action.js';
import { Badge, Loadable } from '../components/Status.js';
import type { Delivery, Webhook } from '../types.js';
import { fmtTime, useAsync } from '../util.js';

export function WebhooksPage({ webhookId }: { webhookId: string | undefined }) {
  const hooks = useAsync(() => get<Page<Webhook>>('/v1/webhooks'), []);
  return (
    <section aria-labelledby="webhooks-h">
      <h1 id="webhooks-h">Webhooks</h1>
      <Loadable state={hooks} label="webhook endpoints">
        {(page) =>
          page.data.length === 0 ? (
            <p class="muted">No webhook endpoints. Create one with POST /v1/webhooks.</p>
          ) : (
            <>
              <div class="scroll">
                <table data-testid="webhooks-table">
                  <caption class="sr-only">Webhook endpoints and their health</caption>
                  <thead>
                    <tr>
                      <th scope="col">URL</th>
                      <th scope="col">Status</th>
                      <th scope="col">Failing since</th>
                      <th scope="col">Last success</th>
                      <th scope="col">Events</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.data.map((w) => (
                      <tr key={w.id} data-webhook-id={w.id} aria-current={w.id === webhookId ? 'true' : undefined}>
                        <td>
                          <a href={`#/webhooks/${enc(w.id)}`}>{w.url}</a>
                          {w.description && <div class="muted">{w.description}</div>}
                        </td>
                        <td>
                          <Badge state={w.status} /> {w.failing_since && <Badge state="failing" />}
                          {w.disabled_reason && <div class="muted">{w.disabled_reason}</div>}
                        </td>
                        <td data-field="failing_since">{fmtTime(w.failing_since)}</td>
                        <td data-field="last_success_at">{fmtTime(w.last_success_at)}</td>
                        <td>{w.event_types.length ? w.event_types.join(', ') : 'every type'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {webhookId ? <Deliveries key={webhookId} webhookId={webhookId} /> : <p class="muted">Choose an endpoint to see its deliveries.</p>}
            </>
          )
        }
      </Loadable>
    </section>
  );
}

function Deliveries({ webhookId }: { webhookId: string }) {
  const base = `/v1/webhooks/${enc(webhookId)}`;
  const [status, setStatus] = useState('');
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const deliveries = useAsync(() => get<Page<Delivery>>(`${base}/deliveries`, { status, cursor, limit: 50 }), [webhookId, status, cursor]);
  const [since, setSince] = useState(() => new Date(Date.now() - 86_400_000).toISOString().slice(0, 16));
  const { outcome, act } = useAction(deliveries.reload);
  return (
    <section aria-labelledby="deliveries-h" class="card">
      <h2 id="deliveries-h">Deliveries</h2>
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
        <form class="inline" onSubmit={(e) => { e.preventDefault(); void act(async () => { const r = await api<{ replayed: number }>('POST', `${base}/recover`, { since: new Date(since).toISOString() }); return `Recovered: ${r.replayed} parked deliveries replayed.`; }); }}>
          <label>
            Recover parked deliveries since <input type="datetime-local" value={since} onInput={(e) => setSince(e.currentTarget.value)} required />
          </label>
          <button type="submit" class="secondary">Recover</button>
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
                      <strong>#{d.id}</strong> <span>{d.event_type}</span> <Badge state={d.status} /> <span data-field="attempts">{d.attempts} attempts</span>
                      <span class="muted">created {fmtTime(d.created_at)}{d.replay_of ? ` · replay of #${d.replay_of}` : ''}</span>
                      <button type="button" class="small" onClick={() => void act(async () => { const r = await api<Delivery>('POST', `${base}/deliveries/${d.id}/replay`); return `Replayed as delivery ${r.id}.`; })} aria-label={`Replay delivery ${d.id}`}>
                        Replay
                      </button>
                    </div>
                    {d.last_error && <div class="error-text">Last error: {d.last_error}</div>}
                    <details>
                      <summary>Attempts ({d.attempt_history.length})</summary>
                      {d.attempt_history.length === 0 ? (
                        <p class="muted">No attempt yet{d.next_attempt_at ? `; next at ${fmtTime(d.next_attempt_at)}` : ''}.</p>
                      ) : (
                        <table>
                          <caption class="sr-only">Attempts of delivery {d.id}, oldest first</caption>
                          <thead><tr><th scope="col">#</th><th scope="col">Started</th><th scope="col">Status code</th><th scope="col">Duration (ms)</th><th scope="col">Error or answer</th></tr></thead>
                          <tbody>
                            {d.attempt_history.map((a) => (
                              <tr key={a.id}><td>{a.attempt}</td><td>{fmtTime(a.started_at)}</td><td>{a.status_code ?? '—'}</td><td>{a.duration_ms}</td><td class="excerpt">{a.error ?? a.response_body_excerpt ?? ''}</td></tr>
                            ))}
                          </tbody>
                        </table>
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
