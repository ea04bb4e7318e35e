import { z } from 'zod';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand } from '../shared/commandHandler.js';
import { tenantState, tenantStream, type TenantEvent, type TenantState } from './tenant.js';

export const IssueApiKeyInput = z.object({
  tenantId: z.string().uuid(),
  keyId: z.string().uuid(),
  keyHash: z.string().regex(/^[0-9a-f]{64}$/),
  at: z.string().datetime(),
  by: z.string().min(1),
});
export type IssueApiKey = z.infer<typeof IssueApiKeyInput>;

export function decideIssueApiKey(cmd: IssueApiKey, state: TenantState): TenantEvent {
  if (!state.exists) throw new DomainError('not_found', 'tenant not found');
  return { type: 'tenant.api_key_issued', data: { tenant_id: cmd.tenantId, key_id: cmd.keyId, key_hash: cmd.keyHash, created_at: cmd.at, issued_by: cmd.by } };
}

export async function issueApiKey(eventStore: EventStore, input: IssueApiKey) {
  const cmd = IssueApiKeyInput.parse(input);
  return handleCommand(eventStore, tenantStream(cmd.tenantId), tenantState, (state) => decideIssueApiKey(cmd, state));
}
