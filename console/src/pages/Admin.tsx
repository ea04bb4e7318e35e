import { useState } from 'preact/hooks';
import { allPages, api, enc, get, type Page } from '../api.js';
import { OutcomeLine, useAction } from '../components/Action.js';
import { ShownOnce } from '../components/ShownOnce.js';
import { Loadable } from '../components/Status.js';
import { Time } from '../components/Time.js';
import type { ApiKey, AuditEntry, Tenant } from '../types.js';
import { useAsync } from '../util.js';
import { ScrollBox } from '../components/ScrollBox.js';

export function AdminPage({ tenantId }: { tenantId: string | undefined }) {
  const tenants = useAsync(() => allPages<Tenant>('/v1/admin/tenants', { limit: 1000 }), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const t = await api<Tenant & { api_key: string }>('POST', '/v1/admin/tenants', { name });
      setCreated({ name: t.name, key: t.api_key });
      setName('');
      tenants.reload();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  const tenant = tenants.data?.find((t) => t.id === tenantId);
  return (
    <section aria-labelledby="admin-h">
      <h1 id="admin-h">Admin</h1>
      <section aria-labelledby="tenants-h" class="card">
        <h2 id="tenants-h">Tenants</h2>
        <Loadable state={tenants} label="tenants">
          {(all) => (
            <ScrollBox>
              <table data-testid="tenants-table">
                <caption class="sr-only">Tenants of the instance</caption>
                <thead><tr><th scope="col">Name</th><th scope="col">id</th><th scope="col">Created</th></tr></thead>
                <tbody>
                  {all.map((t) => (
                    <tr key={t.id} data-tenant-id={t.id} aria-current={t.id === tenantId ? 'true' : undefined}>
                      <td><a href={`#/admin/${enc(t.id)}`}>{t.name}</a></td>
                      <td class="mono">{t.id}</td>
                      <td><Time at={t.created_at} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollBox>
          )}
        </Loadable>
        <form class="inline" onSubmit={create}>
          <label>
            New tenant name <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={255} />
          </label>
          <button type="submit">Create tenant</button>
        </form>
        {error && <p role="alert" class="error">{error}</p>}
        {created && <ShownOnce label={`API key of ${created.name}`} secret={created.key} />}
      </section>
      {tenantId ? <TenantKeys key={tenantId} tenantId={tenantId} name={tenant?.name ?? tenantId} /> : null}
      <AuditLog key={tenantId ?? 'admin'} path={tenantId ? `/v1/admin/tenants/${enc(tenantId)}/audit-log` : '/v1/admin/audit-log'} title={tenantId ? `Audit log of ${tenant?.name ?? 'the tenant'}` : "The instance admin's audit log"} />
    </section>
  );
}

function TenantKeys({ tenantId, name }: { tenantId: string; name: string }) {
  const base = `/v1/admin/tenants/${enc(tenantId)}/api-keys`;
  const keys = useAsync(() => get<{ data: ApiKey[] }>(base), [tenantId]);
  const [issued, setIssued] = useState<string | null>(null);
  const { outcome, act } = useAction(keys.reload);
  return (
    <section aria-labelledby="keys-h" class="card">
      <h2 id="keys-h">API keys of {name}</h2>
      <Loadable state={keys} label="API keys">
        {({ data }) => (
          <ScrollBox>
            <table data-testid="keys-table">
              <caption class="sr-only">API keys (ids only: the service keeps no secret in the clear)</caption>
              <thead><tr><th scope="col">Key id</th><th scope="col">Issued</th><th scope="col">Revoked</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
              <tbody>
                {data.map((k) => (
                  <tr key={k.id} data-key-id={k.id}>
                    <td class="mono">{k.id}</td>
                    <td><Time at={k.created_at} /></td>
                    <td data-field="revoked_at"><Time at={k.revoked_at} /></td>
                    <td>
                      {!k.revoked_at && (
                        <button type="button" class="small danger" aria-label={`Revoke key ${k.id}`} onClick={() => { if (confirm(`Revoke key ${k.id}? Calls with it fail at once.`)) void act(async () => { await api('DELETE', `${base}/${enc(k.id)}`); return `Key ${k.id} revoked.`; }); }}>
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        )}
      </Loadable>
      <button type="button" onClick={() => void act(async () => { const k = await api<{ id: string; api_key: string }>('POST', base); setIssued(k.api_key); return `Key ${k.id} issued.`; })}>
        Issue a key
      </button>
      <OutcomeLine outcome={outcome} />
      {issued && <ShownOnce label="New API key" secret={issued} />}
    </section>
  );
}

/** An audit log, newest first, 50 entries a page: the admin's, a tenant's (admin key) or the tenant's own (tenant key). */
export function AuditLog({ path, title }: { path: string; title: string }) {
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const log = useAsync(() => get<Page<AuditEntry>>(path, { cursor, limit: 50 }), [path, cursor]);
  return (
    <section aria-labelledby="audit-h" class="card">
      <h2 id="audit-h">{title}</h2>
      <Loadable state={log} label="the audit log">
        {(page) => (
          <ScrollBox>
            <table data-testid="audit-table">
              <caption class="sr-only">{title}, newest first</caption>
              <thead><tr><th scope="col">At</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Status</th><th scope="col">Target</th></tr></thead>
              <tbody>
                {page.data.map((a) => (
                  <tr key={a.id} data-audit-id={a.id}><td><Time at={a.at} /></td><td>{a.actor} <span class="muted mono">{a.actor_id.slice(0, 8)}</span></td><td>{a.action}</td><td>{a.status ?? '—'}</td><td class="mono">{a.target ?? a.path ?? ''}</td></tr>
                ))}
              </tbody>
            </table>
            <p>
              {cursor && <button type="button" class="secondary" onClick={() => setCursor(undefined)}>Newest</button>}{' '}
              {page.next_cursor && <button type="button" class="secondary" onClick={() => setCursor(page.next_cursor!)}>Older</button>}
            </p>
          </ScrollBox>
        )}
      </Loadable>
    </section>
  );
}
