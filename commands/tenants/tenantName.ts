import { ConcurrencyError, type Event, type EventStore } from '../../src/eventstore/eventStore.js';
import { sha256Hex } from '../../src/shared/secrets.js';
import { loadState, type StreamState } from '../shared/commandHandler.js';
import { DomainError } from '../shared/domainError.js';
import { tenantState, tenantStream } from './tenant.js';

export type TenantNameClaimed = Event<'tenant_name.claimed', { name: string; tenant_id: string; at: string }>;

/**
 * Tenant names are unique on the instance (issue 23), enforced like external_ref
 * (commands/users/externalRef.ts): one stream per name, claimed with optimistic concurrency
 * before the tenant is written, so two concurrent creations cannot both win and no lagging read
 * model is asked. Names compare as people read them: Unicode-normalised (NFKC), white space
 * trimmed and collapsed, case ignored ("Acme  Health" and "acme health" are one name).
 */
export const tenantNameKey = (name: string) => name.normalize('NFKC').trim().replace(/\s+/gu, ' ').toLowerCase();
export const tenantNameStream = (name: string) => `tenantname-${sha256Hex(tenantNameKey(name)).slice(0, 40)}`;

/** A claim whose tenant was never written (a crash between the two appends) is free after this long. */
export const ORPHANED_NAME_CLAIM_MS = 60_000;

export type TenantNameState = { claimedBy: string | null; claimedAt: string | null; name: string | null };

export const tenantNameState: StreamState<TenantNameState, TenantNameClaimed> = {
  initialState: () => ({ claimedBy: null, claimedAt: null, name: null }),
  evolve: (state, event) => (event.type === 'tenant_name.claimed' ? { claimedBy: event.data.tenant_id, claimedAt: event.data.at, name: event.data.name } : state),
};

export type ClaimTenantName = { tenantId: string; name: string; at: string };

/**
 * `holderExists` tells whether the current holder's tenant was written. A claim without its
 * tenant is a creation still in flight (a conflict, like any other) or, once old, one a crash
 * abandoned (free again).
 */
export function decideClaimTenantName(cmd: ClaimTenantName, state: TenantNameState, holderExists: boolean): TenantNameClaimed[] {
  if (state.claimedBy === cmd.tenantId) return [];
  const abandoned = !holderExists && state.claimedAt !== null && Date.parse(cmd.at) - Date.parse(state.claimedAt) > ORPHANED_NAME_CLAIM_MS;
  if (state.claimedBy && !abandoned) throw new DomainError('conflict', `a tenant named "${state.name}" already exists (tenant ${state.claimedBy}); choose another name`);
  return [{ type: 'tenant_name.claimed', data: { name: cmd.name.trim(), tenant_id: cmd.tenantId, at: cmd.at } }];
}

async function tenantExists(eventStore: EventStore, tenantId: string): Promise<boolean> {
  return (await loadState(eventStore, tenantStream(tenantId), tenantState)).state.exists;
}

/** Claims the name for the tenant, or throws DomainError `conflict` naming the tenant that holds it. */
export async function claimTenantName(eventStore: EventStore, cmd: ClaimTenantName): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const { state, revision } = await loadState(eventStore, tenantNameStream(cmd.name), tenantNameState);
    const holderExists = state.claimedBy !== null && state.claimedBy !== cmd.tenantId && (await tenantExists(eventStore, state.claimedBy));
    const events = decideClaimTenantName(cmd, state, holderExists);
    if (events.length === 0) return;
    try {
      await eventStore.appendToStream(tenantNameStream(cmd.name), events, { expectedRevision: revision ?? 'no_stream' });
      return;
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < 5) continue;
      throw err;
    }
  }
}
