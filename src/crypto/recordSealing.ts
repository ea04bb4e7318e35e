import type { RecordedEvent } from '../eventstore/eventStore.js';
import { parseDataKeyId, type DataKeys } from './dataKeys.js';
import { openJson, sealJson, type SealedJson } from './payloadCipher.js';
import { hasPersonal, openPersonal } from './personalSealing.js';

/**
 * Health payloads inside events (docs/erasure.md). The events of an ETL job keep in the clear only
 * what routes and orders them (job, user, tenant, provider, batch, times, a count); the array of
 * records (or of rejected lines, whose excerpts are raw input) is sealed once per event under the
 * user's data key for that provider, and opened once, where events are read for projections.
 */
export type SealedField = 'records' | 'items';

/** In place of `records`/`items`: which field it was, how many entries it holds, and the sealed JSON. */
export type SealedPayload = SealedJson & { field: SealedField; count: number };

type Envelope = { job: string; batch: number };

const aadOf = (type: string, d: Envelope) => `${type}\u0000${d.job}\u0000${d.batch}`;

export type EventSealer = {
  keyId: string;
  /**
   * The event's data with `field` replaced by `sealed`. `json` is the field's JSON text (or its
   * UTF-8 bytes), which the caller usually has already (the batcher measured every item by it).
   */
  seal: <D extends Envelope>(type: string, data: D, field: SealedField, json: string | Buffer, count: number) => Omit<D, SealedField> & { sealed: SealedPayload };
};

export function eventSealer(keyId: string, key: Buffer): EventSealer {
  return {
    keyId,
    seal: (type, data, field, json, count) => {
      const { [field]: _plain, ...rest } = data as Record<string, unknown>;
      return { ...(rest as Omit<typeof data, SealedField>), sealed: { field, count, ...sealJson(key, keyId, json, aadOf(type, data)) } };
    },
  };
}

/** Whether an event carries a sealed payload (events appended before sealing existed, or by tests, do not). */
export const isSealed = (e: RecordedEvent): boolean => typeof (e.data as { sealed?: unknown }).sealed === 'object' && (e.data as { sealed?: unknown }).sealed !== null;

/** Whether an event carries anything sealed: a record payload, or personal fields (src/crypto/personalSealing.ts). */
export const needsOpening = (e: RecordedEvent): boolean => isSealed(e) || hasPersonal(e);

/**
 * Opens sealed events for whoever folds them (the projections, and every reader of the service's
 * event store): the field comes back as it was sealed. An event whose key was destroyed (its data
 * erased) comes back as a tombstone: the same event with an empty array, which every evolve
 * turns into no change. Personal fields come back null once their user's key is destroyed.
 */
export class EventOpener {
  constructor(private readonly keys: DataKeys) {}

  async open(e: RecordedEvent): Promise<RecordedEvent> {
    if (hasPersonal(e)) return openPersonal(this.keys, e);
    if (!isSealed(e)) return e;
    const { sealed, ...rest } = e.data as Envelope & { sealed: SealedPayload };
    const key = parseDataKeyId(sealed.key) ? await this.keys.get(sealed.key) : null;
    const value = key ? (JSON.parse(openJson(key, sealed, aadOf(e.type, rest))) as unknown[]) : [];
    return { ...e, data: { ...rest, [sealed.field]: value } };
  }

  /** A user's (or provider's) data was erased: keys this process remembers for it are forgotten. */
  forget(userId: string, provider?: string): void {
    this.keys.forget(userId, provider);
  }
}
