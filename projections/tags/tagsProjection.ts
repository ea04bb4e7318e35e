import { USER_ERASED } from '../../src/catalog/eventTypes.js';
import type { UserErased } from '../../commands/deletions/erasureEvents.js';
import { TAG_CREATED, type TagCreated, type TagKind } from '../../commands/tags/tag.js';
import { defineProjection } from '../../src/projector/projection.js';

export type TagDoc = {
  _id: string;
  tenant_id: string;
  user_id: string;
  kind: TagKind;
  label: string | null;
  note: string | null;
  start: string;
  end: string | null;
  /** `end`, or the far future for an ongoing tag: an overlap test is then two range conditions. */
  end_key: string;
  created_at: string;
};

export const TAGS = 'time_tags';
export const ONGOING_END_KEY = '9999-12-31T23:59:59.999Z';

export const tagsProjection = defineProjection<TagCreated | UserErased>({
  name: 'time_tags',
  collections: [{ name: TAGS, indexes: [{ fields: [['user_id', 1], ['start', 1]] }] }],
  eventTypes: [TAG_CREATED, USER_ERASED],
  evolve: (event) => {
    if (event.type === USER_ERASED) return [{ op: 'deleteMany', collection: TAGS, filter: { user_id: event.data.user_id } }];
    const d = event.data;
    const doc: TagDoc = {
      _id: d.tag_id,
      tenant_id: d.tenant_id,
      user_id: d.user_id,
      kind: d.kind,
      label: d.label,
      note: d.note,
      start: d.start,
      end: d.end,
      end_key: d.end ?? ONGOING_END_KEY,
      created_at: d.created_at,
    };
    return [{ op: 'put', collection: TAGS, doc }];
  },
});
