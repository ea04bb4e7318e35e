import { describe, expect, it } from 'vitest';
import { browserHash, decideBinding, type BindConsent } from '../../../commands/connections/bindConsent.js';
import { connectionState, type ConnectionState } from '../../../commands/connections/connection.js';
import { DomainError } from '../../../commands/shared/domainError.js';

/** Issue 20, finding 5 (RFC 6749 §10.12): who owns a consent state, decided on the connection's state alone. */
const tenantId = '00000000-0000-4000-8000-000000000001';
const pendingState = (browser: string | null, expiresAt = '2026-01-01T10:10:00.000Z'): ConnectionState => ({
  ...connectionState.initialState(),
  tenantId,
  pending: { s1: { redirectUri: null, verifierSealed: null, expiresAt, by: 'k', browserHash: browser } },
});
const cmd = (over: Partial<BindConsent> = {}): BindConsent => ({
  tenantId,
  userId: 'u',
  provider: 'oura',
  stateHash: 's1',
  presentedHash: null,
  freshHash: browserHash('fresh'),
  at: '2026-01-01T10:00:00.000Z',
  ...over,
});
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err instanceof DomainError ? err.code : 'other';
  }
  return null;
};

describe('decideBinding (issue 20, finding 5)', () => {
  it('binds an unbound state to the fresh value, never to a cookie the browser brought (a planted cookie is not adopted)', () => {
    const [bound] = decideBinding(pendingState(null), cmd({ presentedHash: browserHash('planted') }));
    expect(bound).toMatchObject({ type: 'connection.consent_bound', data: { state_hash: 's1', browser_hash: browserHash('fresh') } });
  });

  it('lets the owning browser reopen (nothing appended) and refuses any other browser, with or without a cookie', () => {
    const owned = pendingState(browserHash('mine'));
    expect(decideBinding(owned, cmd({ presentedHash: browserHash('mine') }))).toEqual([]);
    expect(refusal(() => decideBinding(owned, cmd({ presentedHash: browserHash('theirs') })))).toBe('conflict');
    expect(refusal(() => decideBinding(owned, cmd()))).toBe('conflict');
  });

  it('refuses an unknown, used, expired or other tenant’s state as not_found', () => {
    expect(refusal(() => decideBinding(pendingState(null), cmd({ stateHash: 'other' })))).toBe('not_found');
    expect(refusal(() => decideBinding(pendingState(null, '2026-01-01T10:00:00.000Z'), cmd()))).toBe('not_found');
    expect(refusal(() => decideBinding(pendingState(null), cmd({ tenantId: '00000000-0000-4000-8000-000000000002' })))).toBe('not_found');
  });
});
