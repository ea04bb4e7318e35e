import { z } from 'zod';
import { ConcurrencyError, type EventStore } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand, loadState } from '../shared/commandHandler.js';
import { externalRefState, externalRefStream, type ExternalRefEvent, type ExternalRefState } from './externalRef.js';
import { userState, userStream, type UserEvent, type UserState } from './user.js';

export const ExternalRef = z.string().min(1).max(255);

export const RegisterUserInput = z.object({
  tenantId: z.string().uuid(),
  userId: z.string().uuid(),
  externalRef: ExternalRef.nullable(),
  at: z.string().datetime(),
});
export type RegisterUser = z.infer<typeof RegisterUserInput>;

/** A claim whose user was never written (a crash between the two appends) is free after this long. */
export const ORPHANED_CLAIM_MS = 60_000;

/**
 * `claimHolderExists` tells whether the current holder's user exists. A claim without its user is
 * either a registration still in flight (a conflict, like any other) or, once old, one a crash
 * abandoned (free again).
 */
export function decideClaimExternalRef(cmd: RegisterUser, state: ExternalRefState, claimHolderExists: boolean): ExternalRefEvent[] {
  if (state.claimedBy === cmd.userId) return [];
  const abandoned = !claimHolderExists && state.claimedAt !== null && Date.parse(cmd.at) - Date.parse(state.claimedAt) > ORPHANED_CLAIM_MS;
  if (state.claimedBy && !abandoned) throw new DomainError('conflict', 'external_ref is already used by another user of this tenant');
  return [{ type: 'external_ref.claimed', data: { tenant_id: cmd.tenantId, external_ref: cmd.externalRef!, user_id: cmd.userId, at: cmd.at } }];
}

/**
 * A user id is new, or derived from an Idempotency-Key's reservation (src/server/idempotency.ts):
 * then a retry of the same request finds its own user, which is no conflict but the answer.
 */
export function decideRegisterUser(cmd: RegisterUser, state: UserState): UserEvent[] {
  if (state.status === 'active' && state.tenantId === cmd.tenantId && state.externalRef === cmd.externalRef) return [];
  if (state.status !== 'none') throw new DomainError('conflict', 'user already exists');
  return [{ type: 'user.registered', data: { user_id: cmd.userId, tenant_id: cmd.tenantId, external_ref: cmd.externalRef, created_at: cmd.at } }];
}

/** Claims the external_ref first, then writes the user: the claim is what makes the ref unique. */
export async function registerUser(eventStore: EventStore, input: RegisterUser) {
  const cmd = RegisterUserInput.parse(input);
  if (cmd.externalRef !== null) await claimExternalRef(eventStore, cmd);
  return handleCommand(eventStore, userStream(cmd.userId), userState, (state) => decideRegisterUser(cmd, state));
}

async function claimExternalRef(eventStore: EventStore, cmd: RegisterUser, attempts = 5): Promise<void> {
  const stream = externalRefStream(cmd.tenantId, cmd.externalRef!);
  for (let attempt = 0; ; attempt++) {
    const { state, revision } = await loadState(eventStore, stream, externalRefState);
    let holderExists = false;
    if (state.claimedBy && state.claimedBy !== cmd.userId) {
      const holder = await loadState(eventStore, userStream(state.claimedBy), userState);
      holderExists = holder.state.status === 'active' || holder.state.status === 'deleting';
    }
    const events = decideClaimExternalRef(cmd, state, holderExists);
    if (events.length === 0) return;
    try {
      await eventStore.appendToStream(stream, events, { expectedRevision: revision ?? 'no_stream' });
      return;
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < attempts) continue;
      throw err;
    }
  }
}
