import type { AuditEntry } from '../../commands/audit/recordAudit.js';

/** An audit entry of the instance admin creating a tenant's resource (`over` changes any field). */
export const adminAuditEntry = (log: string, action: string, tenantId: string, over: Partial<AuditEntry> = {}): AuditEntry => ({
  log,
  actor: 'admin',
  actor_id: 'admin',
  action,
  method: 'POST',
  path: '/v1/admin/tenants',
  status: 201,
  tenant_id: tenantId,
  request_id: null,
  target: null,
  at: new Date().toISOString(),
  ...over,
});
