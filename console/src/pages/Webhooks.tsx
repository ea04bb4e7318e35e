import { useState } from 'preact/hooks';
import { api, enc, get, type Page } from '../api.js';
import { OutcomeLine, useAction } from '../components/Action.js';
import { ShownOnce } from '../components/ShownOnce.js';
import { Badge, Loadable } from '../components/Status.js';
import { Time } from '../components/Time.js';
import { WebhookForm, type WebhookFields } from '../components/WebhookForm.js';
import type { Webhook } from '../types.js';
import { useAsync } from '../util.js';
import { Deliveries } from './WebhookDeliveries.js';
import { ScrollBox } from '../components/ScrollBox.js';

/** Only what changed goes in the PATCH: an edit of the description never re-enables an endpoint the service disabled. */
function changes(before: Webhook, after: WebhookFields): Partial<WebhookFields> {
  const out: Partial<WebhookFields> = {};
  if (after.url !== before.url) out.url = after.url;
  if (after.description !== (before.description ?? '')) out.description = after.description;
  if (after.event_types.join() !== before.event_types.join()) out.event_types = after.event_types;
  if (after.enabled !== undefined && after.enabled !== (before.status === 'active')) out.enabled = after.enabled;
  return out;
}

export function WebhooksPage({ webhookId }: { webhookId: string | undefined }) {
  const hooks = useAsync(() => get<Page<Webhook>>('/v1/webhooks'), []);
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const { outcome, act } = useAction(hooks.reload);

  const create = (f: WebhookFields) =>
    act(async () => {
      const w = await api<Webhook & { secret: string }>('POST', '/v1/webhooks', { url: f.url, event_types: f.event_types, ...(f.description ? { description: f.description } : {}) });
      setSecret({ url: w.url, secret: w.secret });
      setAdding(false);
      location.hash = `#/webhooks/${enc(w.id)}`;
      return `Endpoint ${w.url} created.`;
    });
  const update = (w: Webhook, f: WebhookFields) =>
    act(async () => {
      const body = changes(w, f);
      if (Object.keys(body).length) await api<Webhook>('PATCH', `/v1/webhooks/${enc(w.id)}`, body);
      setEditing(null);
      return Object.keys(body).length ? `Endpoint ${f.url} saved.` : 'Nothing changed.';
    });
  const remove = (w: Webhook) => {
    if (!confirm(`Delete the endpoint ${w.url}? It receives nothing more; its pending deliveries are parked.`)) return;
    void act(async () => {
      await api('DELETE', `/v1/webhooks/${enc(w.id)}`);
      if (w.id === webhookId) location.hash = '#/webhooks';
      return `Endpoint ${w.url} deleted.`;
    });
  };

  return (
    <section aria-labelledby="webhooks-h">
      <h1 id="webhooks-h">Webhooks</h1>
      <p>
        {!adding && (
          <button type="button" onClick={() => { setAdding(true); setSecret(null); }}>
            Add an endpoint
          </button>
        )}
      </p>
      {adding && (
        <section aria-labelledby="add-h" class="card">
          <h2 id="add-h">New endpoint</h2>
          <WebhookForm submitLabel="Create endpoint" onSubmit={create} onCancel={() => setAdding(false)} />
        </section>
      )}
      <OutcomeLine outcome={outcome} />
      {secret && <ShownOnce label={`Signing secret of ${secret.url}`} secret={secret.secret} note="the service keeps it sealed and never shows it again" />}
      <Loadable state={hooks} label="webhook endpoints">
        {(page) =>
          page.data.length === 0 ? (
            <p class="muted">No webhook endpoints yet.</p>
          ) : (
            <>
              <ScrollBox>
                <table data-testid="webhooks-table">
                  <caption class="sr-only">Webhook endpoints and their health</caption>
                  {/* Edit and Delete follow the URL they act on, so a phone shows them without scrolling (issue 36). */}
                  <thead>
                    <tr>
                      <th scope="col">URL</th>
                      <th scope="col"><span class="sr-only">Actions</span></th>
                      <th scope="col">Status</th>
                      <th scope="col">Events</th>
                      <th scope="col">Failing since</th>
                      <th scope="col">Last success</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.data.map((w) => (
                      <tr key={w.id} data-webhook-id={w.id} aria-current={w.id === webhookId ? 'true' : undefined}>
                        <td class="url">
                          <a href={`#/webhooks/${enc(w.id)}`}>{w.url}</a>
                          {w.description && <div class="muted" data-field="description">{w.description}</div>}
                        </td>
                        <td class="actions">
                          <button type="button" class="small secondary" aria-label={`Edit endpoint ${w.url}`} onClick={() => setEditing(editing === w.id ? null : w.id)} aria-expanded={editing === w.id}>
                            Edit
                          </button>{' '}
                          <button type="button" class="small danger" aria-label={`Delete endpoint ${w.url}`} onClick={() => remove(w)}>
                            Delete
                          </button>
                        </td>
                        <td>
                          <Badge state={w.status} /> {w.failing_since && <Badge state="failing" />}
                          {w.disabled_reason && <div class="muted">{w.disabled_reason}</div>}
                        </td>
                        <td data-field="event_types">{w.event_types.length ? w.event_types.join(', ') : 'every type'}</td>
                        <td data-field="failing_since"><Time at={w.failing_since} /></td>
                        <td data-field="last_success_at"><Time at={w.last_success_at} /></td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollBox>
              {editing && page.data.some((w) => w.id === editing) && (
                <section aria-labelledby="edit-h" class="card">
                  <h2 id="edit-h">Edit endpoint</h2>
                  <WebhookForm key={editing} endpoint={page.data.find((w) => w.id === editing)!} submitLabel="Save endpoint" onSubmit={(f) => update(page.data.find((w) => w.id === editing)!, f)} onCancel={() => setEditing(null)} />
                </section>
              )}
              {webhookId ? <Deliveries key={webhookId} webhookId={webhookId} url={page.data.find((w) => w.id === webhookId)?.url} /> : <p class="muted">Choose an endpoint to see its deliveries.</p>}
            </>
          )
        }
      </Loadable>
    </section>
  );
}
