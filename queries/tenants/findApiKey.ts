import type { ReadStore } from '../../src/readstore/readStore.js';
import type { ApiKeyDoc } from '../../projections/tenants/tenantsProjection.js';

/** The key document for a presented secret's hash (authentication). */
export function findApiKeyByHash(readStore: ReadStore, keyHash: string) {
  return readStore.get<ApiKeyDoc>('api_keys', keyHash);
}

export async function findApiKeyById(readStore: ReadStore, keyId: string) {
  const [doc] = await readStore.find<ApiKeyDoc>('api_keys', { filter: { key_id: keyId }, limit: 1 });
  return doc ?? null;
}

export function listApiKeys(readStore: ReadStore, tenantId: string) {
  return readStore.find<ApiKeyDoc>('api_keys', { filter: { tenant_id: tenantId }, sort: [['created_at', 1]] });
}
