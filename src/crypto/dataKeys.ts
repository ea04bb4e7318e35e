import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { ConcurrencyError, StreamDeletedError, type Event, type EventStore, type RecordedEvent, type StreamAppend } from '../eventstore/eventStore.js';
import type { SealedKey, SealingKeyring } from './sealingKeys.js';

/**
 * Per user and provider data keys (docs/erasure.md). Every health payload of a user's data from
 * one provider (record events, rejected lines, raw uploads) is sealed with the key of that user,
 * provider and generation; erasing the provider's data destroys the generation's key, and the
 * next data of that provider gets the next generation's key. Deleting the user destroys all of
 * them.
 *
 * A key is one event on a stream of its own, sealed with SEALING_KEY. Destroying it tombstones
 * the stream: on the embedded store its rows are removed (and the freed pages zeroed), on
 * KurrentDB the stream can never be read or written again and a scavenge removes the bytes.
 */
export type DataKeyRef = { userId: string; provider: string; generation: number };

export type DataKeyIssued = Event<
  'datakey.issued',
  { key_id: string; user_id: string; tenant_id: string; provider: string; generation: number; sealed: SealedKey; issued_at: string }
>;
/** The same key sealed again under the current SEALING_KEY (a rotation; `npm run cli -- datakeys reseal`). */
export type DataKeyResealed = Event<'datakey.resealed', { key_id: string; sealed: SealedKey; resealed_at: string }>;
export type DataKeyEvent = DataKeyIssued | DataKeyResealed;

export const DATA_KEY_STREAM_PREFIX = 'datakey-';

export const dataKeyId = (ref: DataKeyRef): string => `${ref.userId}/${ref.provider}/${ref.generation}`;
export const dataKeyStream = (ref: DataKeyRef): string => `${DATA_KEY_STREAM_PREFIX}${ref.userId}-${ref.provider}-${ref.generation}`;

const KEY_ID = /^([A-Za-z0-9-]{1,64})\/([a-z0-9-]{1,64})\/(\d{1,9})$/;

export function parseDataKeyId(keyId: string): DataKeyRef | null {
  const m = KEY_ID.exec(keyId);
  return m ? { userId: m[1]!, provider: m[2]!, generation: Number(m[3]) } : null;
}

/** The key of a generation whose data was erased: nothing of that generation can be sealed or opened again. */
export class DataKeyDestroyedError extends Error {
  override name = 'DataKeyDestroyedError';
  constructor(readonly keyId: string) {
    super(`data key ${keyId} was destroyed (its data was erased)`);
  }
}

export type DataKeysOptions = {
  /**
   * How long an opened key is remembered. Another thread's destruction of a key is noticed by
   * then at the latest; meanwhile the events it opened are gone or dropped (docs/erasure.md).
   */
  cacheTtlMs?: number;
  cacheMax?: number;
};

const DESTROYED = Symbol('destroyed');

export class DataKeys {
  private readonly cache: LRUCache<string, Buffer | typeof DESTROYED>;

  constructor(
    private readonly eventStore: EventStore,
    private readonly sealing: SealingKeyring,
    options: DataKeysOptions = {},
  ) {
    this.cache = new LRUCache({ max: options.cacheMax ?? 10_000, ttl: options.cacheTtlMs ?? 5 * 60_000 });
  }

  /**
   * The key of this user, provider and generation, created on first use. Two callers racing to
   * create it agree on one: the stream takes one first event (`no_stream`), the other reads it.
   * Throws DataKeyDestroyedError when the generation was erased.
   */
  async issue(ref: DataKeyRef, tenantId: string, now = new Date()): Promise<{ keyId: string; key: Buffer }> {
    const prepared = await this.prepare(ref, tenantId, now);
    if (!prepared.unstored) return prepared;
    const { streamName, events, expectedRevision } = prepared.unstored;
    try {
      await this.eventStore.appendToStream(streamName, events, { expectedRevision });
    } catch (err) {
      const lost = this.lostIssue(prepared.keyId, err);
      if (lost === 'destroyed') throw new DataKeyDestroyedError(prepared.keyId);
      if (lost !== 'taken') throw err;
      const winner = await this.get(prepared.keyId);
      if (!winner) throw new DataKeyDestroyedError(prepared.keyId);
      return { keyId: prepared.keyId, key: winner };
    }
    this.stored(prepared.keyId, prepared.key);
    return { keyId: prepared.keyId, key: prepared.key };
  }

  /**
   * The key as `issue` finds it, except that a key not issued yet is made but not stored:
   * `unstored` is its stream's first event, for the caller to append in the same append as the
   * first data sealed with it (one durable write instead of two, issue 37; only data that is
   * itself in that append, so nothing stored is ever sealed with a key that was not). After that
   * append the caller hands the key to `stored`; when it fails on the key's stream
   * (`lostIssue`), another writer issued the key first or the generation was erased, and the
   * caller seals again with the key `issue` answers then.
   */
  async prepare(ref: DataKeyRef, tenantId: string, now = new Date()): Promise<{ keyId: string; key: Buffer; unstored: StreamAppend | null }> {
    const keyId = dataKeyId(ref);
    const existing = await this.get(keyId);
    if (existing) return { keyId, key: existing, unstored: null };
    if (this.cache.get(keyId) === DESTROYED) throw new DataKeyDestroyedError(keyId);
    const key = randomBytes(32);
    const event: DataKeyIssued = {
      type: 'datakey.issued',
      data: { key_id: keyId, user_id: ref.userId, tenant_id: tenantId, provider: ref.provider, generation: ref.generation, sealed: this.sealing.seal(key, keyId), issued_at: now.toISOString() },
    };
    return { keyId, key, unstored: { streamName: dataKeyStream(ref), events: [event], expectedRevision: 'no_stream' } };
  }

  /** A key `prepare` made was appended: remembered as `issue` remembers the keys it stores. */
  stored(keyId: string, key: Buffer): void {
    this.cache.set(keyId, key);
  }

  /**
   * Whether an append carrying a prepared key failed on the key's stream: `destroyed` (the
   * generation was erased; remembered as `issue` remembers it) when the stream is tombstoned,
   * `taken` when another writer issued the key first; null when `err` is not about that stream.
   */
  lostIssue(keyId: string, err: unknown): 'destroyed' | 'taken' | null {
    const ref = parseDataKeyId(keyId);
    const stream = ref ? dataKeyStream(ref) : null;
    if (err instanceof StreamDeletedError && err.streamName === stream) {
      this.cache.set(keyId, DESTROYED);
      return 'destroyed';
    }
    return err instanceof ConcurrencyError && err.streamName === stream ? 'taken' : null;
  }

  /** The key, or null when it was destroyed or never issued. */
  async get(keyId: string): Promise<Buffer | null> {
    const cached = this.cache.get(keyId);
    if (cached === DESTROYED) return null;
    if (cached) return cached;
    const ref = parseDataKeyId(keyId);
    if (!ref) return null;
    let events: RecordedEvent[];
    try {
      events = await this.eventStore.readStream(dataKeyStream(ref));
    } catch (err) {
      if (!(err instanceof StreamDeletedError)) throw err;
      this.cache.set(keyId, DESTROYED);
      return null;
    }
    const latest = [...events].reverse().find((e) => e.type === 'datakey.issued' || e.type === 'datakey.resealed') as RecordedEvent<DataKeyEvent> | undefined;
    // Never issued: not remembered, it may be issued in a moment.
    if (!latest) return null;
    const key = this.sealing.open(latest.data.sealed, keyId);
    this.cache.set(keyId, key);
    return key;
  }

  /** Destroys a generation's key for good; destroying it again, or a key never issued, is harmless. */
  async destroy(ref: DataKeyRef): Promise<void> {
    const keyId = dataKeyId(ref);
    try {
      await this.eventStore.deleteStream(dataKeyStream(ref), { hard: true });
    } catch (err) {
      if (!(err instanceof StreamDeletedError)) throw err;
    }
    this.cache.set(keyId, DESTROYED);
  }

  /** Forgets what this process remembers of a user's keys (of one provider, or all). */
  forget(userId: string, provider?: string): void {
    const prefix = provider ? `${userId}/${provider}/` : `${userId}/`;
    for (const k of [...this.cache.keys()]) if (k.startsWith(prefix)) this.cache.delete(k);
  }

  /**
   * Seals the key of `stream` again under the current SEALING_KEY when its latest sealed copy is
   * under another one. Answers whether it appended. A destroyed key is left alone.
   */
  async reseal(stream: string, now = new Date()): Promise<boolean> {
    let events: RecordedEvent[];
    try {
      events = await this.eventStore.readStream(stream);
    } catch (err) {
      if (err instanceof StreamDeletedError) return false;
      throw err;
    }
    const latest = [...events].reverse().find((e) => e.type === 'datakey.issued' || e.type === 'datakey.resealed') as RecordedEvent<DataKeyEvent> | undefined;
    if (!latest || latest.data.sealed.kid === this.sealing.currentKid) return false;
    const revision = events[events.length - 1]!.streamRevision;
    const keyId = latest.data.key_id;
    const key = this.sealing.open(latest.data.sealed, keyId);
    const event: DataKeyResealed = { type: 'datakey.resealed', data: { key_id: keyId, sealed: this.sealing.seal(key, keyId), resealed_at: now.toISOString() } };
    try {
      await this.eventStore.appendToStream(stream, [event], { expectedRevision: revision });
    } catch (err) {
      // Destroyed or resealed meanwhile: nothing left to do here.
      if (err instanceof StreamDeletedError || err instanceof ConcurrencyError) return false;
      throw err;
    }
    return true;
  }
}
