import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DataKeyDestroyedError, DataKeys, dataKeyId, dataKeyStream } from '../../src/crypto/dataKeys.js';
import { openBytes, openJson, sealBytes, sealJson } from '../../src/crypto/payloadCipher.js';
import { EventOpener, eventSealer, isSealed } from '../../src/crypto/recordSealing.js';
import { SealingKeyError, SealingKeyring } from '../../src/crypto/sealingKeys.js';
import type { RecordedEvent } from '../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';

/**
 * docs/erasure.md: data keys sealed with SEALING_KEY (AES-256-GCM), health payloads sealed with
 * data keys, erasure by destroying a key, rotation of SEALING_KEY.
 */
const ref = { userId: '6a1f0f9e-1111-4c1d-9a55-0d2c9a4e7f10', provider: 'device-a', generation: 0 };

describe('sealing keys (contracts §1 SEALING_KEY seals per-user data keys)', () => {
  it('opens what it sealed, only under the key id it was sealed for', () => {
    const ring = new SealingKeyring(randomBytes(32));
    const key = randomBytes(32);
    const sealed = ring.seal(key, 'u/p/0');
    expect(ring.open(sealed, 'u/p/0').equals(key)).toBe(true);
    expect(() => ring.open(sealed, 'u/p/1')).toThrow(SealingKeyError);
    expect(JSON.stringify(sealed)).not.toContain(key.toString('base64'));
  });

  it('after a rotation opens keys sealed with the previous key and seals new ones with the current one', () => {
    const old = randomBytes(32);
    const before = new SealingKeyring(old).seal(Buffer.alloc(32, 7), 'k');
    const rotated = new SealingKeyring(randomBytes(32), [old]);
    expect(rotated.open(before, 'k').equals(Buffer.alloc(32, 7))).toBe(true);
    expect(rotated.seal(Buffer.alloc(32, 7), 'k').kid).toBe(rotated.currentKid);
    expect(rotated.currentKid).not.toBe(before.kid);
    expect(() => new SealingKeyring(randomBytes(32)).open(before, 'k')).toThrow(/does not hold/);
  });
});

describe('payload ciphers', () => {
  it('seal JSON and bytes under a data key, bound to where they are stored', () => {
    const key = randomBytes(32);
    const json = JSON.stringify([{ value: 71.123456789, external_id: 'E1A7D3C2-0B4F-4F6E-9A01-000000000001' }]);
    const sealed = sealJson(key, 'k', json, 'here');
    expect(JSON.stringify(sealed)).not.toContain('71.123456789');
    expect(openJson(key, sealed, 'here')).toBe(json);
    expect(() => openJson(key, sealed, 'there')).toThrow();
    expect(() => openJson(randomBytes(32), sealed, 'here')).toThrow();
    const raw = Buffer.from('{"records":[{"marker":"abc"}]}');
    const box = sealBytes(key, raw, 'k');
    expect(box.includes(Buffer.from('marker'))).toBe(false);
    expect(openBytes(key, box, 'k').equals(raw)).toBe(true);
    expect(() => openBytes(randomBytes(32), box, 'k')).toThrow();
  });
});

describe('data keys on the event store', () => {
  const store = () => new SqliteEventStore({ path: ':memory:' });

  it('issues one key per user, provider and generation, even to callers racing for it', async () => {
    const es = store();
    const sealing = randomBytes(32);
    // Two threads' views of the keys, neither remembering anything yet.
    const keys = new DataKeys(es, new SealingKeyring(sealing));
    const [a, b] = await Promise.all([keys.issue(ref, 't'), new DataKeys(es, new SealingKeyring(sealing)).issue(ref, 't')]);
    expect(b.key.equals(a.key)).toBe(true);
    expect((await es.readStream(dataKeyStream(ref))).length).toBe(1);
    expect((await keys.issue({ ...ref, generation: 1 }, 't')).key.equals(a.key)).toBe(false);
    await es.close();
  });

  it('destroys a key for good: it opens nothing any more and its generation cannot get a new one', async () => {
    const es = store();
    const keys = new DataKeys(es, new SealingKeyring(randomBytes(32)));
    await keys.issue(ref, 't');
    await keys.destroy(ref);
    expect(await keys.get(dataKeyId(ref))).toBeNull();
    // Another process's view (no cache) agrees.
    expect(await new DataKeys(es, new SealingKeyring(randomBytes(32))).get(dataKeyId(ref))).toBeNull();
    await expect(keys.issue(ref, 't')).rejects.toBeInstanceOf(DataKeyDestroyedError);
    await keys.destroy(ref);
    await es.close();
  });

  it('reseals a key under the current sealing key after a rotation, so the previous key can be retired', async () => {
    const es = store();
    const old = randomBytes(32);
    const { key } = await new DataKeys(es, new SealingKeyring(old)).issue(ref, 't');
    const current = randomBytes(32);
    expect(await new DataKeys(es, new SealingKeyring(current, [old])).reseal(dataKeyStream(ref))).toBe(true);
    expect(await new DataKeys(es, new SealingKeyring(current, [old])).reseal(dataKeyStream(ref))).toBe(false);
    expect((await new DataKeys(es, new SealingKeyring(current)).get(dataKeyId(ref)))!.equals(key)).toBe(true);
    await es.close();
  });
});

describe('record events sealed once, opened where projections read them', () => {
  const event = (data: Record<string, unknown>): RecordedEvent => ({
    id: 'e1',
    type: 'samples.ingested',
    data,
    metadata: {},
    streamName: 'ingest-x',
    streamRevision: 0,
    globalPosition: 1,
    createdAt: new Date(),
  });

  it('keeps only routing fields in the clear, opens to the same records, and opens to a tombstone once the key is destroyed', async () => {
    const es = new SqliteEventStore({ path: ':memory:' });
    const keys = new DataKeys(es, new SealingKeyring(randomBytes(32)));
    const { keyId, key } = await keys.issue(ref, 't');
    const records = [{ external_id: 'E1A7D3C2-0B4F-4F6E-9A01-000000000001', value: 72.5 }];
    const plain = { job: 'upload-x', user_id: ref.userId, tenant_id: 't', provider: 'device-a', ingested_at: '2026-11-01T00:00:00.000Z', batch: 0, records };
    const data = eventSealer(keyId, key).seal('samples.ingested', plain, 'records', JSON.stringify(records), records.length);
    expect(Object.keys(data).sort()).toEqual(['batch', 'ingested_at', 'job', 'provider', 'sealed', 'tenant_id', 'user_id']);
    expect(JSON.stringify(data)).not.toContain('E1A7D3C2');
    expect(data.sealed).toMatchObject({ field: 'records', count: 1, key: keyId });
    const opener = new EventOpener(keys);
    expect(isSealed(event(data))).toBe(true);
    expect((await opener.open(event(data))).data).toEqual(plain);
    // Moved to another batch's place, it does not open.
    await expect(opener.open(event({ ...data, batch: 1 }))).rejects.toThrow();
    await keys.destroy(ref);
    expect((await new EventOpener(new DataKeys(es, new SealingKeyring(randomBytes(32)))).open(event(data))).data).toEqual({ ...plain, records: [] });
    expect((await opener.open(event(data))).data.records).toEqual([]);
    await es.close();
  });
});
