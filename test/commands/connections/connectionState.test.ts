import { describe, expect, it } from 'vitest';
import { CONSENT_STATE_TTL_MS, connectionState, type ConnectionEvent } from '../../../commands/connections/connection.js';
import type { RecordedEvent } from '../../../src/eventstore/eventStore.js';

/** Issue 26, retention: the connection's fold holds the pending consent states of ten minutes at most, however many were requested. */
const base = { tenant_id: 't', user_id: 'u', provider: 'oura' };
const requested = (hash: string, atMs: number) =>
  ({
    type: 'connection.consent_requested',
    data: { ...base, state_hash: hash, redirect_uri: null, verifier_sealed: null, expires_at: new Date(atMs + CONSENT_STATE_TTL_MS).toISOString(), at: new Date(atMs).toISOString(), by: 'x' },
  }) as unknown as RecordedEvent<ConnectionEvent>;

describe('connection fold (issue 26: pending consent states expire)', () => {
  it('forgets the states expired by the time of the next consent request, keeps the live ones', () => {
    const t0 = Date.parse('2026-01-01T10:00:00Z');
    let state = connectionState.initialState();
    for (let i = 0; i < 50; i++) state = connectionState.evolve(state, requested(`old-${i}`, t0 + i * 1000));
    state = connectionState.evolve(state, requested('recent', t0 + 9 * 60_000));
    expect(Object.keys(state.pending)).toHaveLength(51);
    state = connectionState.evolve(state, requested('new', t0 + 10 * 60_000 + 30_000));
    // States issued in the first 30 s have expired (10 minutes); those after, 'recent' and 'new' live.
    expect(Object.keys(state.pending).sort()).toEqual([...Array.from({ length: 19 }, (_, i) => `old-${i + 31}`), 'new', 'recent'].sort());
  });
});
