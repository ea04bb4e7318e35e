import { z } from 'zod';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { handleCommand } from '../shared/commandHandler.js';
import { DomainError } from '../shared/domainError.js';
import { userStream } from '../users/user.js';
import { TAG_CREATED, TAG_KINDS, userTagsState, type TagCreated, type UserTagsState } from './tag.js';

export const CreateTagInput = z.object({
  tenantId: z.string().uuid(),
  userId: z.string().uuid(),
  tagId: z.string().uuid(),
  kind: z.enum(TAG_KINDS),
  label: z.string().max(255).nullable(),
  note: z.string().max(4000).nullable(),
  /** Normalised to UTC ISO strings by the caller; `end` null: ongoing. */
  start: z.string().datetime(),
  end: z.string().datetime().nullable(),
  at: z.string().datetime(),
});
export type CreateTag = z.infer<typeof CreateTagInput>;

/**
 * Contracts §9. A tag id already in the stream is the retry of the same creation (its id derives
 * from an Idempotency-Key's reservation): nothing new. Another tenant's or a deleting user is
 * not found.
 */
export function decideCreateTag(cmd: CreateTag, state: UserTagsState): TagCreated[] {
  if (state.status !== 'active' || state.tenantId !== cmd.tenantId) throw new DomainError('not_found', 'user not found');
  if (state.tagIds.has(cmd.tagId)) return [];
  if (cmd.end !== null && Date.parse(cmd.end) < Date.parse(cmd.start)) throw new DomainError('invalid', 'end is before start');
  return [
    {
      type: TAG_CREATED,
      data: {
        tag_id: cmd.tagId,
        user_id: cmd.userId,
        tenant_id: cmd.tenantId,
        kind: cmd.kind,
        label: cmd.label,
        note: cmd.note,
        start: cmd.start,
        end: cmd.end,
        created_at: cmd.at,
      },
    },
  ];
}

export async function createTag(eventStore: EventStore, input: CreateTag) {
  const cmd = CreateTagInput.parse(input);
  return handleCommand(eventStore, userStream(cmd.userId), userTagsState, (state) => decideCreateTag(cmd, state));
}
