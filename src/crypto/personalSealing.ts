import type { Event, RecordedEvent } from '../eventstore/eventStore.js';
import { DataKeyDestroyedError, parseDataKeyId, type DataKeyRef, type DataKeys } from './dataKeys.js';
import { openJson, sealJson, type SealedJson } from './payloadCipher.js';

/**
 * Personal data outside the health records (docs/erasure.md): a user's external_ref, time-tag
 * labels and notes, consent evidence, what connections know of the user's provider account. The
 * fields an event type holds of it (a plan, declared in commands/shared/personalFields.ts) are
 * sealed together, when the event is appended, under the user's **profile key**: a data key of
 * the user's own (not of a provider), created on first use and destroyed only when the user is
 * deleted. Every copy of those events, on any backend, then reads as nothing once the user is gone.
 *
 * In the clear stays what routes the event (`user_id`, `tenant_id`, ids, times, states).
 */
export const PROFILE_KEY = 'profile';
export const profileKeyRef = (userId: string): DataKeyRef => ({ userId, provider: PROFILE_KEY, generation: 0 });

/** Event type → the top-level fields of its data that are personal. */
export type PersonalFieldPlan = Readonly<Record<string, readonly string[]>>;

/** In place of the personal fields: which fields, and their values as one sealed JSON object. */
export type SealedPersonal = SealedJson & { fields: string[] };

type PersonalData = Record<string, unknown> & { user_id?: unknown; tenant_id?: unknown; personal?: SealedPersonal };

const aadOf = (type: string, userId: string) => `personal\u0000${type}\u0000${userId}`;

export const hasPersonal = (e: { data: unknown }): boolean => {
  const p = (e.data as PersonalData).personal;
  return typeof p === 'object' && p !== null;
};

export class PersonalSealer {
  constructor(
    private readonly keys: DataKeys,
    private readonly plan: PersonalFieldPlan,
  ) {}

  /** The events as they are to be stored: personal fields sealed. Events without any are passed as they are. */
  async seal(events: readonly Event[]): Promise<readonly Event[]> {
    let out: Event[] | null = null;
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      const fields = this.plan[e.type];
      if (!fields) continue;
      const sealed = await this.sealOne(e, fields);
      if (sealed === e) continue;
      out ??= [...events];
      out[i] = sealed;
    }
    return out ?? events;
  }

  private async sealOne(e: Event, fields: readonly string[]): Promise<Event> {
    const d = e.data as PersonalData;
    if (hasPersonal(e)) return e;
    const present = fields.filter((f) => d[f] !== undefined && d[f] !== null);
    if (present.length === 0) return e;
    if (typeof d.user_id !== 'string' || typeof d.tenant_id !== 'string') throw new Error(`${e.type}: personal fields need user_id and tenant_id in the clear`);
    const rest: PersonalData = { ...d };
    for (const f of present) delete rest[f];
    let issued: { keyId: string; key: Buffer };
    try {
      issued = await this.keys.issue(profileKeyRef(d.user_id), d.tenant_id);
    } catch (err) {
      // The user was deleted: nothing personal of theirs can be stored any more.
      if (!(err instanceof DataKeyDestroyedError)) throw err;
      return { ...e, data: { ...rest, ...Object.fromEntries(present.map((f) => [f, null])) } };
    }
    const values = Object.fromEntries(present.map((f) => [f, d[f]]));
    const personal: SealedPersonal = { fields: present, ...sealJson(issued.key, issued.keyId, JSON.stringify(values), aadOf(e.type, d.user_id)) };
    return { ...e, data: { ...rest, personal } };
  }
}

/**
 * The event with its personal fields back, as they were appended. Once the user's key is
 * destroyed (the user deleted) they come back null.
 */
export async function openPersonal(keys: DataKeys, e: RecordedEvent): Promise<RecordedEvent> {
  if (!hasPersonal(e)) return e;
  const { personal, ...rest } = e.data as PersonalData & { personal: SealedPersonal };
  const key = parseDataKeyId(personal.key) ? await keys.get(personal.key) : null;
  const values = key ? (JSON.parse(openJson(key, personal, aadOf(e.type, String(rest.user_id)))) as Record<string, unknown>) : Object.fromEntries(personal.fields.map((f) => [f, null]));
  return { ...e, data: { ...rest, ...values } } as RecordedEvent;
}
