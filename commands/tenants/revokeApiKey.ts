import { z } from 'zod';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand } from '../shared/commandHandler.js';
import { tenantState, tenantStream, type TenantEvent, type TenantState } from './tenant.js';

export const RevokeApiKeyInput = z.object({
  tenantId: z.string().uuid(),
  keyId: z.string().uuid(),
  at: z.string().datetime(),
  by: z.string().min(1),
});
export type RevokeApiKey = z.infer<typeof RevokeApiKeyInput>;

/** Revoking twice is not an error: the key is revoked either way, and nothing new is recorded. */
export function decideRevokeApiKey(cmd: RevokeApiKey, state: TenantState): TenantEvent[] {
  const key = state.keys[cmd.keyId];
  if (!state.exists || !key) throw new DomainError('not_found', 'api key not found');
  if (key.revoked) return [];
  return [{ type: 'tenant.api_key_revoked', data: { tenant_id: cmd.tenantId, key_id: cmd.keyId, key_hash: key.hash, revoked_at: cmd.at, revoked_by: cmd.by } }];
}

export async function revokeApiKey(eventStore: EventStore, input: RevokeApiKey) {
  const cmd = RevokeApiKeyInput.parse(input);
  return handleCommand(eventStore, tenantStream(cmd.tenantId), tenantState, (state) => decideRevokeApiKey(cmd, state));
}
