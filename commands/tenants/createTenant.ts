import { z } from 'zod';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand, loadState } from '../shared/commandHandler.js';
import { tenantState, tenantStream, type TenantEvent, type TenantState } from './tenant.js';
import { claimTenantName } from './tenantName.js';

export const CreateTenantInput = z.object({
  tenantId: z.string().uuid(),
  name: z.string().trim().min(1).max(255),
  keyId: z.string().uuid(),
  keyHash: z.string().regex(/^[0-9a-f]{64}$/),
  at: z.string().datetime(),
  by: z.string().min(1),
});
export type CreateTenant = z.infer<typeof CreateTenantInput>;

/** A tenant is born with its first API key: the out-of-band set-up hands both over at once. */
export function decideCreateTenant(cmd: CreateTenant, state: TenantState): TenantEvent[] {
  if (state.exists) throw new DomainError('conflict', 'tenant already exists');
  return [
    { type: 'tenant.created', data: { tenant_id: cmd.tenantId, name: cmd.name, created_at: cmd.at, created_by: cmd.by } },
    {
      type: 'tenant.api_key_issued',
      data: { tenant_id: cmd.tenantId, key_id: cmd.keyId, key_hash: cmd.keyHash, created_at: cmd.at, issued_by: cmd.by },
    },
  ];
}

/** Claims the name first (unique per instance, commands/tenants/tenantName.ts), then writes the tenant. */
export async function createTenant(eventStore: EventStore, input: CreateTenant) {
  const cmd = CreateTenantInput.parse(input);
  // An existing tenant is refused before its id could claim a second name.
  if ((await loadState(eventStore, tenantStream(cmd.tenantId), tenantState)).state.exists) throw new DomainError('conflict', 'tenant already exists');
  await claimTenantName(eventStore, { tenantId: cmd.tenantId, name: cmd.name, at: cmd.at });
  return handleCommand(eventStore, tenantStream(cmd.tenantId), tenantState, (state) => decideCreateTenant(cmd, state));
}
