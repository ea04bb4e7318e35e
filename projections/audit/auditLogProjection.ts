import { auditDetails, type AuditRecorded } from '../../commands/audit/recordAudit.js';
import { defineProjection } from '../../src/projector/projection.js';

export type AuditDoc = {
  _id: string;
  id: string;
  log: string;
  /** Global position: a total order for "newest first" that equal timestamps cannot give. */
  seq: number;
  at: string;
  actor: string;
  actor_id: string;
  action: string;
  method: string | null;
  path: string | null;
  status: number | null;
  tenant_id: string | null;
  request_id: string | null;
  target: string | null;
};

export const auditLogProjection = defineProjection<AuditRecorded>({
  name: 'audit_log',
  collections: [{ name: 'audit_log', indexes: [{ fields: [['log', 1], ['seq', -1]] }] }],
  eventTypes: ['audit.recorded'],
  evolve: (event) => {
    const d = event.data;
    return [
      {
        op: 'put',
        collection: 'audit_log',
        doc: {
          _id: event.id,
          id: event.id,
          log: d.log,
          seq: event.globalPosition,
          at: d.at,
          actor: d.actor,
          actor_id: d.actor_id,
          ...auditDetails(d),
        },
      },
    ];
  },
});
