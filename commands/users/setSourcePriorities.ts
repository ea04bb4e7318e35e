import { z } from 'zod';
import type { Event, EventStore, RecordedEvent } from '../../src/eventstore/eventStore.js';
import { isCategoryType } from '../../src/catalog/categoryTypes.js';
import { findQuantityType } from '../../src/catalog/quantityCatalog.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand, type StreamState } from '../shared/commandHandler.js';
import { isVisibleTo, userState, userStream, type UserEvent, type UserState } from './user.js';

/**
 * The user's order of sources (contracts §6, spec "Source order" and "Merged view"): keyed by a
 * quantity or category type, a group, or `*`; each value lists 1 to 20 distinct source names of
 * 1 to 64 characters, best first. A PUT replaces the whole order.
 */
export const PRIORITY_GROUPS = ['activity', 'heart', 'recovery', 'body', 'sleep', 'workouts'] as const;
export const ALL_METRICS_KEY = '*';
export const MAX_PRIORITY_SOURCES = 20;
export const MAX_SOURCE_NAME_LENGTH = 64;

const groups: ReadonlySet<string> = new Set(PRIORITY_GROUPS);

/** A key of the order: a catalog quantity type, a known category type, one of the six groups, or `*`. */
export function isPriorityKey(key: string): boolean {
  return key === ALL_METRICS_KEY || groups.has(key) || findQuantityType(key) !== undefined || isCategoryType(key);
}

export const SourceList = z
  .array(z.string().min(1).max(MAX_SOURCE_NAME_LENGTH))
  .min(1)
  .max(MAX_PRIORITY_SOURCES)
  .refine((sources) => new Set(sources).size === sources.length, { message: 'sources must be distinct' })
  .describe(`1 to ${MAX_PRIORITY_SOURCES} distinct source names (records' \`source\`, e.g. apple, garmin, oura), best first`);

export const SourcePrioritiesMap = z.record(z.string(), SourceList).superRefine((priorities, ctx) => {
  for (const key of Object.keys(priorities)) {
    if (!isPriorityKey(key)) {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: `unknown key "${key.slice(0, 80)}": expected a quantity type of the catalog, a category type, a group (${PRIORITY_GROUPS.join(', ')}) or *`,
      });
    }
  }
});
export type SourcePrioritiesMap = z.infer<typeof SourcePrioritiesMap>;

export const SetSourcePrioritiesInput = z.object({
  tenantId: z.string().uuid(),
  userId: z.string().uuid(),
  priorities: SourcePrioritiesMap,
  at: z.string().datetime(),
  by: z.string().min(1),
});
export type SetSourcePriorities = z.infer<typeof SetSourcePrioritiesInput>;

export type SourcePrioritiesSet = Event<
  'source_priorities.set',
  { user_id: string; tenant_id: string; priorities: Record<string, string[]>; at: string; by: string }
>;

/** The user stream as this decision folds it: the order itself decides nothing, only the user's lifecycle does. */
const userStreamState: StreamState<UserState, UserEvent | SourcePrioritiesSet> = {
  initialState: userState.initialState,
  evolve: (state, event) => (event.type === 'source_priorities.set' ? state : userState.evolve(state, event as RecordedEvent<UserEvent>)),
};

/** Only an active user of the tenant has an order set; another tenant's, a missing or a deleting user is not found. */
export function decideSetSourcePriorities(cmd: SetSourcePriorities, state: UserState): SourcePrioritiesSet {
  if (!isVisibleTo(state, cmd.tenantId) || state.status !== 'active') throw new DomainError('not_found', 'user not found');
  return {
    type: 'source_priorities.set',
    data: { user_id: cmd.userId, tenant_id: cmd.tenantId, priorities: cmd.priorities, at: cmd.at, by: cmd.by },
  };
}

export async function setSourcePriorities(eventStore: EventStore, input: SetSourcePriorities) {
  const cmd = SetSourcePrioritiesInput.parse(input);
  return handleCommand(eventStore, userStream(cmd.userId), userStreamState, (state) => decideSetSourcePriorities(cmd, state));
}
