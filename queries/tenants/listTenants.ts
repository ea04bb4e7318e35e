import type { ReadStore } from '../../src/readstore/readStore.js';
import type { TenantDoc } from '../../projections/tenants/tenantsProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';

export function listTenants(readStore: ReadStore, page: PageRequest) {
  return findPage<TenantDoc>(readStore, 'tenants', { sort: [['created_at', 1]] }, page);
}

export function getTenant(readStore: ReadStore, tenantId: string) {
  return readStore.get<TenantDoc>('tenants', tenantId);
}
