import { useState } from 'preact/hooks';
import { WEBHOOK_EVENT_TYPES } from '../../../src/catalog/webhookEventTypes.js';
import type { Webhook } from '../types.js';

export type WebhookFields = { url: string; description: string; event_types: string[]; enabled?: boolean };

/**
 * An endpoint's fields, to create one or change one: URL, description, the event types it receives
 * (none ticked: every type, including types added later) and, when editing, whether it is enabled.
 * The service checks what it is sent; a refusal comes back with its reason.
 */
export function WebhookForm({ endpoint, submitLabel, onSubmit, onCancel }: { endpoint?: Webhook; submitLabel: string; onSubmit: (f: WebhookFields) => Promise<void>; onCancel?: () => void }) {
  const [url, setUrl] = useState(endpoint?.url ?? '');
  const [description, setDescription] = useState(endpoint?.description ?? '');
  const [types, setTypes] = useState<string[]>(endpoint?.event_types ?? []);
  const [enabled, setEnabled] = useState(endpoint ? endpoint.status === 'active' : true);
  const [busy, setBusy] = useState(false);
  const toggle = (t: string, on: boolean) => setTypes(on ? [...types, t] : types.filter((x) => x !== t));
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      await onSubmit({ url: url.trim(), description, event_types: WEBHOOK_EVENT_TYPES.filter((t) => types.includes(t)), ...(endpoint ? { enabled } : {}) });
    } finally {
      setBusy(false);
    }
  };
  const id = endpoint ? `wh-${endpoint.id}` : 'wh-new';
  return (
    <form class="webhook-form" onSubmit={submit} data-testid={endpoint ? 'webhook-edit' : 'webhook-create'}>
      <label for={`${id}-url`}>URL</label>
      <input id={`${id}-url`} type="url" required maxLength={2048} placeholder="https://example.com/hooks/wellstream" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      <label for={`${id}-desc`}>Description</label>
      <input id={`${id}-desc`} maxLength={255} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      <fieldset>
        <legend>Event types (none ticked: every type, including later ones)</legend>
        <div class="checks">
          {WEBHOOK_EVENT_TYPES.map((t) => (
            <label key={t}>
              <input type="checkbox" checked={types.includes(t)} onChange={(e) => toggle(t, e.currentTarget.checked)} /> {t}
            </label>
          ))}
        </div>
      </fieldset>
      {endpoint && (
        <label>
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Enabled (off: pending deliveries are parked; on again: new events only)
        </label>
      )}
      <p>
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>{' '}
        {onCancel && (
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </p>
    </form>
  );
}
