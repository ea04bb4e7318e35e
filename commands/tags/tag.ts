import type { Event } from '../../src/eventstore/eventStore.js';
import type { StreamState } from '../shared/commandHandler.js';
import { userState, type UserEvent, type UserState } from '../users/user.js';

export const TAG_KINDS = ['illness', 'injury', 'travel', 'event', 'training_block', 'medication', 'habit', 'other'] as const;
export type TagKind = (typeof TAG_KINDS)[number];

export const TAG_CREATED = 'tag.created';

/**
 * A time tag lives in its user's stream: it belongs to the user, is refused once the user's
 * deletion began, and goes with the user's stream when the user is erased.
 */
export type TagCreated = Event<
  typeof TAG_CREATED,
  { tag_id: string; user_id: string; tenant_id: string; kind: TagKind; label: string | null; note: string | null; start: string; end: string | null; created_at: string }
>;

export type UserTagsState = UserState & { tagIds: ReadonlySet<string> };

/** The user's own state, plus which tags exist (so a retried creation finds its tag). */
export const userTagsState: StreamState<UserTagsState, UserEvent | TagCreated> = {
  initialState: () => ({ ...userState.initialState(), tagIds: new Set() }),
  evolve: (state, event) => {
    if (event.type === TAG_CREATED) return { ...state, tagIds: new Set([...state.tagIds, event.data.tag_id]) };
    return { ...userState.evolve(state, event as never), tagIds: state.tagIds };
  },
};
