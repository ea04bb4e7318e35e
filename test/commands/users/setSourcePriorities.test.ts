import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../commands/shared/domainError.js';
import { decideSetSourcePriorities, isPriorityKey, SourcePrioritiesMap, type SetSourcePriorities } from '../../../commands/users/setSourcePriorities.js';
import type { UserState } from '../../../commands/users/user.js';

/** contracts §6 "source order": the decision and the body's rules, without HTTP. */

const TENANT = '11111111-1111-4111-8111-111111111111';
const USER = '22222222-2222-4222-8222-222222222222';
const cmd: SetSourcePriorities = { tenantId: TENANT, userId: USER, priorities: { heart_rate: ['garmin', 'apple'] }, at: '2026-11-20T10:00:00.000Z', by: 'key-1' };
const state = (over: Partial<UserState>): UserState => ({ status: 'active', tenantId: TENANT, externalRef: null, deletionJobId: null, ...over });

describe('decideSetSourcePriorities (contracts §6)', () => {
  it('emits source_priorities.set {user_id, tenant_id, priorities, at, by} for an active user of the tenant', () => {
    expect(decideSetSourcePriorities(cmd, state({}))).toEqual({
      type: 'source_priorities.set',
      data: { user_id: USER, tenant_id: TENANT, priorities: { heart_rate: ['garmin', 'apple'] }, at: cmd.at, by: 'key-1' },
    });
  });

  it('refuses a user that is not active, or of another tenant, as not found (spec Conventions 6; Reads rule 6)', () => {
    for (const s of [state({ status: 'none', tenantId: null }), state({ status: 'deleting' }), state({ status: 'erased' }), state({ tenantId: '33333333-3333-4333-8333-333333333333' })]) {
      expect(() => decideSetSourcePriorities(cmd, s)).toThrow(DomainError);
      try {
        decideSetSourcePriorities(cmd, s);
      } catch (err) {
        expect((err as DomainError).code).toBe('not_found');
      }
    }
  });
});

describe('keys and values of the order (contracts §6)', () => {
  it('a key is a catalog quantity type, a category type, one of the six groups, or *', () => {
    for (const k of ['heart_rate', 'step_count', 'sleep_analysis', 'activity', 'heart', 'recovery', 'body', 'sleep', 'workouts', '*']) expect(isPriorityKey(k), k).toBe(true);
    for (const k of ['vitals', 'nutrition', 'other', 'daily', 'Heart_Rate', '', '**', 'device-a']) expect(isPriorityKey(k), k).toBe(false);
  });

  it('a value lists 1 to 20 distinct names of 1 to 64 characters', () => {
    expect(SourcePrioritiesMap.safeParse({ heart: ['a'] }).success).toBe(true);
    expect(SourcePrioritiesMap.safeParse({ heart: Array.from({ length: 20 }, (_, i) => `s${i}`) }).success).toBe(true);
    expect(SourcePrioritiesMap.safeParse({ heart: Array.from({ length: 21 }, (_, i) => `s${i}`) }).success).toBe(false);
    expect(SourcePrioritiesMap.safeParse({ heart: [] }).success).toBe(false);
    expect(SourcePrioritiesMap.safeParse({ heart: ['a', 'a'] }).success).toBe(false);
    expect(SourcePrioritiesMap.safeParse({ heart: ['x'.repeat(64)] }).success).toBe(true);
    expect(SourcePrioritiesMap.safeParse({ heart: ['x'.repeat(65)] }).success).toBe(false);
    expect(SourcePrioritiesMap.safeParse({ heart: [''] }).success).toBe(false);
  });
});
