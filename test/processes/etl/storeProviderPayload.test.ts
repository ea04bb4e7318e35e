import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { uploadStream, type UploadAccepted } from '../../../commands/ingestion/upload.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import { registerUser } from '../../../commands/users/registerUser.js';
import { DataKeys, dataKeyId, dataKeyStream } from '../../../src/crypto/dataKeys.js';
import { openBytes } from '../../../src/crypto/payloadCipher.js';
import { SealingKeyring } from '../../../src/crypto/sealingKeys.js';
import { StreamDeletedError, type EventStore, type StreamAppend } from '../../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { storeProviderPayload, type ProviderPayload } from '../../../src/processes/etl/storeProviderPayload.js';
import type { RawStore } from '../../../src/rawstore/rawStore.js';

/**
 * Issue 37 ("acceptance is one durable write"): a user's first small upload issues the data key
 * of its provider (docs/erasure.md) in the same append as the payload sealed with it and its
 * acceptance (contracts §3: 202 means durable), so no payload is ever stored under a key that was
 * not; two first uploads racing agree on one key and each opens with it.
 */
const TENANT = randomUUID();
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

/** Small payloads never reach the raw store: any call to it fails the test. */
const noRawStore = new Proxy({} as RawStore, {
  get: (_t, name) => () => {
    throw new Error(`the raw store was asked for ${String(name)}`);
  },
});

/** The event store, with every append it is asked for written down (stream names per call). */
function recording(inner: EventStore, beforeAppend: () => Promise<void> = async () => {}) {
  const appends: string[][] = [];
  const store = Object.create(inner) as EventStore;
  store.appendToStream = async (streamName, events, options) => {
    appends.push([streamName]);
    return inner.appendToStream(streamName, events, options);
  };
  store.appendToStreams = async (requests: readonly StreamAppend[]) => {
    appends.push(requests.map((r) => r.streamName));
    await beforeAppend();
    return inner.appendToStreams(requests);
  };
  return { store, appends };
}

async function setUp() {
  const inner = new SqliteEventStore({ path: ':memory:' });
  open.push(inner);
  const sealing = new SealingKeyring(randomBytes(32));
  const userId = randomUUID();
  await registerUser(inner, { tenantId: TENANT, userId, externalRef: null, at: new Date().toISOString() });
  return { inner, sealing, userId };
}

const payload = (userId: string, payloadId: string, body: Buffer): ProviderPayload => ({
  tenantId: TENANT,
  userId,
  provider: 'device-a',
  payloadId,
  body,
  contentType: 'application/gzip',
  tier: 'upload',
  actor: randomUUID(),
});

/** The payload as the ETL job reads it: the acceptance's inline bytes opened with the key the store holds (a process that never saw the key). */
async function openedPayload(inner: EventStore, sealing: SealingKeyring, userId: string, payloadId: string): Promise<Buffer> {
  const [accepted] = (await inner.readStream(uploadStream(userId, 'device-a', payloadId, 0))) as unknown as { data: UploadAccepted['data'] }[];
  const keyId = dataKeyId({ userId, provider: 'device-a', generation: 0 });
  const key = await new DataKeys(inner, sealing).get(keyId);
  expect(key).not.toBeNull();
  return openBytes(key!, Buffer.from(accepted!.data.inline_payload!, 'base64'), keyId);
}

describe('storeProviderPayload: a small payload and the data key it is sealed with (issue 37, contracts §3)', () => {
  it("a user's first small upload stores its data key, registration and acceptance in one append, and the payload opens with the stored key", async () => {
    const { inner, sealing, userId } = await setUp();
    const { store, appends } = recording(inner);
    const body = Buffer.from('{"type":"heart_rate"}\n');
    const stored = await storeProviderPayload({ eventStore: store, rawStore: noRawStore, dataKeys: new DataKeys(store, sealing) }, payload(userId, 'u-1', body));

    expect(stored.replayed).toBe(false);
    expect(stored.accepted.sha256).toBe(createHash('sha256').update(body).digest('hex'));
    expect(appends).toEqual([[dataKeyStream({ userId, provider: 'device-a', generation: 0 }), `providerdata-${userId}-device-a`, uploadStream(userId, 'device-a', 'u-1', 0)]]);
    expect(await openedPayload(inner, sealing, userId, 'u-1')).toEqual(body);
  });

  it('a later upload of the same user and provider appends no key: the stored one seals it', async () => {
    const { inner, sealing, userId } = await setUp();
    const { store, appends } = recording(inner);
    const stores = { eventStore: store, rawStore: noRawStore, dataKeys: new DataKeys(store, sealing) };
    await storeProviderPayload(stores, payload(userId, 'u-1', Buffer.from('first\n')));
    await storeProviderPayload(stores, payload(userId, 'u-2', Buffer.from('second\n')));

    expect(appends[1]).toEqual([`providerdata-${userId}-device-a`, uploadStream(userId, 'device-a', 'u-2', 0)]);
    expect(await inner.readStream(dataKeyStream({ userId, provider: 'device-a', generation: 0 }))).toHaveLength(1);
    expect(await openedPayload(inner, sealing, userId, 'u-2')).toEqual(Buffer.from('second\n'));
  });

  it('two first uploads of one user racing, each with a key of its own: one key is stored, the loser is sealed again with it, and both are accepted and open', async () => {
    const { inner, sealing, userId } = await setUp();
    // Both appends wait until both were asked for: each prepared its key before either was stored.
    let arrived = 0;
    let bothArrived!: () => void;
    const both = new Promise<void>((r) => (bothArrived = r));
    const { store, appends } = recording(inner, async () => {
      if (++arrived === 2) bothArrived();
      await both;
    });
    const dataKeys = new DataKeys(store, sealing);
    const stores = { eventStore: store, rawStore: noRawStore, dataKeys };
    const [a, b] = await Promise.all([
      storeProviderPayload(stores, payload(userId, 'u-a', Buffer.from('a\n'))),
      storeProviderPayload(stores, payload(userId, 'u-b', Buffer.from('b\n'))),
    ]);

    expect([a.replayed, b.replayed]).toEqual([false, false]);
    const keyStream = dataKeyStream({ userId, provider: 'device-a', generation: 0 });
    // Both tried with a key of their own; the loser's second append carried none.
    expect(appends.filter((names) => names.includes(keyStream))).toHaveLength(2);
    expect(appends).toHaveLength(3);
    expect(await inner.readStream(keyStream)).toHaveLength(1);
    expect(await openedPayload(inner, sealing, userId, 'u-a')).toEqual(Buffer.from('a\n'));
    expect(await openedPayload(inner, sealing, userId, 'u-b')).toEqual(Buffer.from('b\n'));
  });

  it('a user deleted between the key made and the append (its ledger and keys tombstoned): 410, and neither key nor upload is stored (spec "States: User")', async () => {
    const { inner, sealing, userId } = await setUp();
    const keyStream = dataKeyStream({ userId, provider: 'device-a', generation: 0 });
    const { store } = recording(inner, async () => {
      await inner.deleteStream(`providerdata-${userId}-device-a`, { hard: true });
      await inner.deleteStream(keyStream, { hard: true });
    });
    const err = await storeProviderPayload({ eventStore: store, rawStore: noRawStore, dataKeys: new DataKeys(store, sealing) }, payload(userId, 'u-1', Buffer.from('late\n'))).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('gone');
    await expect(inner.readStream(keyStream)).rejects.toBeInstanceOf(StreamDeletedError);
    expect(await inner.readStream(uploadStream(userId, 'device-a', 'u-1', 0))).toEqual([]);
  });
});

