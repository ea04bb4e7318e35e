import { z } from 'zod';
import { ConcurrencyError, StreamDeletedError, type EventStore } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { loadState } from '../shared/commandHandler.js';
import { isVisibleTo, userState, userStream, type UserState, type UserTokenMinted } from './user.js';
import { userTokensRevision, userTokensStream } from './userTokens.js';

export const USER_SCOPES = ['upload', 'read', 'connect'] as const;
export const DEFAULT_TOKEN_TTL_SECONDS = 3600;
export const MAX_TOKEN_TTL_SECONDS = 86_400;
export const MAX_READ_ONLY_TOKEN_TTL_SECONDS = 2_592_000;

export const MintUserTokenInput = z.object({
  tenantId: z.string().uuid(),
  userId: z.string().uuid(),
  tokenId: z.string().uuid(),
  tokenHash: z.string().regex(/^[0-9a-f]{64}$/),
  scopes: z.array(z.enum(USER_SCOPES)).min(1),
  ttlSeconds: z.number().int().min(0).max(MAX_READ_ONLY_TOKEN_TTL_SECONDS),
  at: z.string().datetime(),
  by: z.string().min(1),
});
export type MintUserToken = z.infer<typeof MintUserTokenInput>;

/** Spec "User token lifetime": 0 means the default; a read-only token may live 30 days, any other 24 hours. */
export function tokenLifetime(scopes: readonly string[], ttlSeconds: number): number | null {
  const ttl = ttlSeconds === 0 ? DEFAULT_TOKEN_TTL_SECONDS : ttlSeconds;
  const readOnly = scopes.length > 0 && scopes.every((s) => s === 'read');
  return ttl > (readOnly ? MAX_READ_ONLY_TOKEN_TTL_SECONDS : MAX_TOKEN_TTL_SECONDS) ? null : ttl;
}

export function decideMintUserToken(cmd: MintUserToken, state: UserState): UserTokenMinted {
  if (!isVisibleTo(state, cmd.tenantId) || state.status !== 'active') throw new DomainError('not_found', 'user not found');
  const scopes = [...new Set(cmd.scopes)];
  const ttl = tokenLifetime(scopes, cmd.ttlSeconds);
  if (ttl === null) throw new DomainError('invalid', 'ttl_seconds is above the limit for these scopes (86400, or 2592000 for a read-only token)');
  return {
    type: 'user.token_minted',
    data: {
      user_id: cmd.userId,
      tenant_id: cmd.tenantId,
      token_id: cmd.tokenId,
      token_hash: cmd.tokenHash,
      scopes,
      expires_at: new Date(Date.parse(cmd.at) + ttl * 1000).toISOString(),
      issued_by: cmd.by,
      created_at: cmd.at,
    },
  };
}

/**
 * Appends the mint to the user's token stream, not to the user's (userTokens.ts). The token
 * stream's revision is read before the user's state and is the append's expected revision: a
 * deletion request revokes on that stream right after `user.deletion_requested`, so a mint that
 * saw the user active either lands before the revocation (which then ends it) or fails on the
 * revision and, run again, finds the user deleting.
 */
export async function mintUserToken(eventStore: EventStore, input: MintUserToken, options: { retries?: number } = {}) {
  const cmd = MintUserTokenInput.parse(input);
  const retries = options.retries ?? 5;
  for (let attempt = 0; ; attempt++) {
    const revision = await userTokensRevision(eventStore, cmd.userId);
    const { state } = await loadState(eventStore, userStream(cmd.userId), userState);
    const minted = decideMintUserToken(cmd, state);
    try {
      const result = await eventStore.appendToStream(userTokensStream(cmd.userId), [minted], { expectedRevision: revision ?? 'no_stream' });
      return { state, newEvents: [minted], position: result.lastPosition };
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < retries) continue;
      if (err instanceof StreamDeletedError) throw new DomainError('not_found', 'user not found');
      throw err;
    }
  }
}
