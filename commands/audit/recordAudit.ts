import { z } from 'zod';
import type { Event, EventStore } from '../../src/eventstore/eventStore.js';

/** The request an audit entry records (null for what no request caused), as stored and as answered. */
export const AuditRequest = {
  method: z.string().nullable(),
  path: z.string().nullable(),
  status: z.number().int().nullable(),
  tenant_id: z.string().nullable(),
  request_id: z.string().nullable(),
  target: z.string().nullable(),
};

/** Every audit entry field after its actor, in the order entries are stored and answered. */
export const auditDetails = (e: { action: string } & { [K in keyof typeof AuditRequest]: z.infer<(typeof AuditRequest)[K]> }) => ({
  action: e.action,
  method: e.method,
  path: e.path,
  status: e.status,
  tenant_id: e.tenant_id,
  request_id: e.request_id,
  target: e.target,
});

export const AuditEntryInput = z.object({
  /** Whose log: a tenant id, or `admin` for the instance admin's own log. */
  log: z.string().min(1),
  actor: z.enum(['admin', 'tenant', 'user', 'system']),
  actor_id: z.string().min(1),
  action: z.string().min(1),
  ...AuditRequest,
  details: z.record(z.string(), z.unknown()).optional(),
  at: z.string().datetime(),
});
export type AuditEntry = z.infer<typeof AuditEntryInput>;
export type AuditRecorded = Event<'audit.recorded', AuditEntry>;

export const auditStream = (log: string) => `audit-${log}`;

/** An audit log only grows: entries need no state to decide on, so they append without expectations. */
export async function recordAudit(eventStore: EventStore, entries: readonly AuditEntry[]): Promise<number> {
  let position = 0;
  for (const entry of entries) {
    const data = AuditEntryInput.parse(entry);
    const r = await eventStore.appendToStream(auditStream(data.log), [{ type: 'audit.recorded', data } satisfies AuditRecorded]);
    position = r.lastPosition;
  }
  return position;
}
