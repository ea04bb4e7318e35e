import { eraseUser } from '../../commands/deletions/eraseUser.js';
import type { UserDeletionRequested } from '../../commands/users/user.js';
import type { EventStore } from '../eventstore/eventStore.js';
import { defineReactor } from '../projector/reactor.js';

/** Runs each requested user deletion to its end (spec "States: User", deleting → removed). */
export const userDeletionProcess = (eventStore: EventStore) =>
  defineReactor<UserDeletionRequested>({
    name: 'user-deletion',
    eventTypes: ['user.deletion_requested'],
    handle: (event) => eraseUser(eventStore, event.data),
  });
