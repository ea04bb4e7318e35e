import type { ReadStore } from '../../src/readstore/readStore.js';
import type { AuditDoc } from '../../projections/audit/auditLogProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';

/** One log (a tenant's, or `admin`), newest first. */
export function listAuditLog(readStore: ReadStore, log: string, page: PageRequest) {
  return findPage<AuditDoc>(readStore, 'audit_log', { filter: { log }, sort: [['seq', -1]] }, page);
}
