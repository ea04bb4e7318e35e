import { Readable } from 'node:stream';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { deletionStream } from '../../../commands/deletions/deletionJob.js';
import { eraseProviderData } from '../../../commands/deletions/eraseProviderData.js';
import { eraseUser } from '../../../commands/deletions/eraseUser.js';
import type { ErasureDeps } from '../../../commands/deletions/erasureSteps.js';
import { loadProviderDataHead } from '../../../commands/deletions/providerData.js';
import { requestProviderErasure } from '../../../commands/deletions/requestProviderErasure.js';
import { acceptUpload } from '../../../commands/ingestion/acceptUpload.js';
import { ingestStream } from '../../../commands/ingestion/ingestedEvents.js';
import type { DeviceParser, NormalizedRecord } from '../../../commands/ingestion/records.js';
import { uploadStream, type UploadAccepted } from '../../../commands/ingestion/upload.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import { registerUser } from '../../../commands/users/registerUser.js';
import { requestUserDeletion } from '../../../commands/users/requestUserDeletion.js';
import { DataKeys, dataKeyId } from '../../../src/crypto/dataKeys.js';
import { sealBytes } from '../../../src/crypto/payloadCipher.js';
import { eventSealer } from '../../../src/crypto/recordSealing.js';
import { SealingKeyring } from '../../../src/crypto/sealingKeys.js';
import { StreamDeletedError } from '../../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { runEtlTask } from '../../../src/processes/etl/etlTask.js';
import { runEtlJob } from '../../../src/processes/etl/runEtlJob.js';
import { rawNamespace } from '../../../src/rawstore/rawNamespaces.js';
import type { RawStore } from '../../../src/rawstore/rawStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { quantity } from '../../server/records/pipelineFixtures.js';
import { gate } from '../../support/server.js';

/**
 * The issue: "an append for an erased user is refused by the event store's concurrency check or
 * by the command, not by a poll of a read model". An ETL run that already got past every check
 * is parked between two appends while the erasure runs to its end; when it goes on, the event
 * store refuses its next append (the job's streams are tombstoned) and nothing of it lands.
 */
const TENANT = randomUUID();
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

/** Raw objects in memory, by key. */
function memoryRawStore(): RawStore {
  const objects = new Map<string, Buffer>();
  return {
    kind: 'file',
    put: async (data, namespace, options = {}) => {
      const key = `${namespace}/${options.sha256 ?? randomBytes(32).toString('hex')}`;
      objects.set(key, data);
      return { key, sha256: key.split('/')[1]!, bytes: data.length };
    },
    putStream: async (data, namespace, options) => {
      const parts: Buffer[] = [];
      for await (const c of data) parts.push(c as Buffer);
      const key = `${namespace}/${options.sha256}`;
      objects.set(key, Buffer.concat(parts));
      return { key, sha256: options.sha256, bytes: objects.get(key)!.length };
    },
    get: async (key) => objects.get(key)!,
    readRange: (key, start, end) => Readable.from([objects.get(key)!.subarray(start, end)]),
    size: async (key) => objects.get(key)!.length,
    exists: async (key) => objects.has(key),
    delete: async (key) => void objects.delete(key),
    deleteNamespace: async (ns) => {
      for (const k of [...objects.keys()]) if (k.startsWith(`${ns}/`)) objects.delete(k);
    },
    close: async () => {},
  };
}

const sample = (i: number): NormalizedRecord =>
  quantity({ external_id: `hr-${i}`, type: 'heart_rate', unit: 'count/min', value: 60 + (i % 40), start_date: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString() });

/** 1,500 records: the first event (1,000) is appended, then the parser waits at `held` before the rest. */
function heldParser(held: Promise<void>, reached: () => void): DeviceParser {
  return {
    slug: 'device-a',
    async *parse() {
      for (let i = 0; i < 1500; i++) {
        if (i === 1001) {
          reached();
          await held;
        }
        yield { record: sample(i) };
      }
    },
  };
}

async function setUp() {
  const eventStore = new SqliteEventStore({ path: ':memory:' });
  const readStore = new SqliteReadStore({ path: ':memory:' });
  open.push(eventStore, readStore);
  const rawStore = memoryRawStore();
  const dataKeys = new DataKeys(eventStore, new SealingKeyring(randomBytes(32)));
  const deps: ErasureDeps = { eventStore, readStore, rawStore, dataKeys, settle: async () => {} };
  const userId = randomUUID();
  await registerUser(eventStore, { tenantId: TENANT, userId, externalRef: null, at: new Date().toISOString() });
  // An upload as the route accepts it: sealed payload, then its ledger registration and acceptance in one append.
  const uploadId = 'u-1';
  const stream = uploadStream(userId, 'device-a', uploadId, 0);
  const { keyId, key } = await dataKeys.issue({ userId, provider: 'device-a', generation: 0 }, TENANT);
  const stored = await rawStore.put(sealBytes(key, Buffer.from('payload'), keyId), rawNamespace(userId, 'device-a', 0));
  const accepted = await acceptUpload(eventStore, {
    tenantId: TENANT,
    userId,
    tokenId: randomUUID(),
    provider: 'device-a',
    uploadId,
    objectKey: stored.key,
    sha256: 'ab'.repeat(32),
    bytes: 7,
    contentType: 'application/gzip',
    generation: 0,
    at: new Date().toISOString(),
  });
  return { eventStore, readStore, rawStore, dataKeys, deps, userId, stream, upload: accepted.accepted as UploadAccepted['data'], keyId, key };
}

describe('an ETL run racing an erasure (issue: refused by the event store, not by a poll)', () => {
  it('user deletion: a run parked between two appends, whose own check would let it go on, has its next append refused; nothing of it stays', async () => {
    const s = await setUp();
    const held = gate();
    let reached!: () => void;
    const atPause = new Promise<void>((r) => (reached = r));
    const run = runEtlJob(s.eventStore, s.rawStore, heldParser(held.promise, reached), s.stream, s.upload, async () => false, {
      sealer: eventSealer(s.keyId, s.key),
      dataKey: { key: s.key, keyId: s.keyId },
    });
    await atPause;
    expect(await s.eventStore.readStream(ingestStream(s.userId, s.stream))).toHaveLength(1);

    const { jobId } = await requestUserDeletion(s.eventStore, { tenantId: TENANT, userId: s.userId, jobId: randomUUID(), at: new Date().toISOString(), by: 'test' });
    await eraseUser(s.deps, jobId);
    held.open();
    await expect(run).rejects.toBeInstanceOf(StreamDeletedError);
    await expect(s.eventStore.readStream(ingestStream(s.userId, s.stream))).rejects.toBeInstanceOf(StreamDeletedError);
    expect((await s.eventStore.readStream(deletionStream(jobId))).map((e) => e.type)).toEqual(['deletion.requested', 'user.erased', 'user.deleted', 'deletion.finished']);
  });

  it('provider erasure: the same, and the ETL task ends its run as discarded (its checks and the refused append agree)', async () => {
    const s = await setUp();
    const held = gate();
    let reached!: () => void;
    const atPause = new Promise<void>((r) => (reached = r));
    const run = runEtlTask({ eventStore: s.eventStore, rawStore: s.rawStore, dataKeys: s.dataKeys, parsers: { 'device-a': heldParser(held.promise, reached) } }, { jobStream: s.stream, upload: s.upload });
    await atPause;
    const { jobId } = await requestProviderErasure(s.eventStore, { tenantId: TENANT, userId: s.userId, provider: 'device-a', at: new Date().toISOString(), by: 'test' });
    await eraseProviderData(s.deps, jobId);
    held.open();
    await expect(run).resolves.toEqual({ kind: 'discarded', reason: 'data erased' });
    await expect(s.eventStore.readStream(ingestStream(s.userId, s.stream))).rejects.toBeInstanceOf(StreamDeletedError);
    expect(await s.dataKeys.get(dataKeyId({ userId: s.userId, provider: 'device-a', generation: 0 }))).toBeNull();
    // New data goes to the next generation.
    expect(await loadProviderDataHead(s.eventStore, s.userId, 'device-a')).toMatchObject({ generation: 1, erasingJob: null, closed: false });
  });

  it('an upload whose ledger head was read before an erasure or a user deletion was appended fails its one append (registration and acceptance) and is refused on the re-read: 409 while the provider is erased, 410 once the user is deleted; nothing of it is written (issue 37; spec "Provider erasure")', async () => {
    const s = await setUp();
    // The racing request lands right after the acceptance read the ledger's head, once.
    let racing: (() => Promise<unknown>) | null = null;
    const store = Object.create(s.eventStore) as SqliteEventStore;
    store.readStream = async (stream, options) => {
      const events = await s.eventStore.readStream(stream, options);
      const race = racing;
      racing = null;
      if (race && stream.startsWith('providerdata-')) await race();
      return events;
    };
    const accept = (provider: string, uploadId: string) =>
      acceptUpload(store, {
        tenantId: TENANT, userId: s.userId, tokenId: randomUUID(), provider, uploadId,
        objectKey: `k/${uploadId}`, sha256: 'cd'.repeat(32), bytes: 1, contentType: 'application/json', at: new Date().toISOString(),
      }).catch((e: unknown) => e);
    racing = () => requestProviderErasure(s.eventStore, { tenantId: TENANT, userId: s.userId, provider: 'device-b', at: new Date().toISOString(), by: 'test' });
    expect(await accept('device-b', 'during-erasure')).toMatchObject({ code: 'conflict' });
    expect(await s.eventStore.readStream(uploadStream(s.userId, 'device-b', 'during-erasure'))).toEqual([]);
    racing = async () => {
      const { jobId } = await requestUserDeletion(s.eventStore, { tenantId: TENANT, userId: s.userId, jobId: randomUUID(), at: new Date().toISOString(), by: 'test' });
      await eraseUser(s.deps, jobId);
    };
    const late = await accept('device-a', 'late');
    expect(late).toBeInstanceOf(DomainError);
    expect((late as DomainError).code).toBe('gone');
    expect(await s.eventStore.readStream(uploadStream(s.userId, 'device-a', 'late'))).toEqual([]);
  });
});
