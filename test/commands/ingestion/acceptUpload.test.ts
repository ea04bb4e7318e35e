import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { providerDataStream } from '../../../commands/deletions/providerData.js';
import { acceptUpload, decideAcceptUpload, type AcceptUpload } from '../../../commands/ingestion/acceptUpload.js';
import { decideReceiveUpload } from '../../../commands/ingestion/receiveUpload.js';
import { uploadState, uploadStream, type UploadReceiving } from '../../../commands/ingestion/upload.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import { registerUser } from '../../../commands/users/registerUser.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';

const TENANT = '7d1f4a52-3c0e-4b8e-9a51-2f3d4c5b6a70';
const USER = '0b6c9e1a-8f2d-4d3c-a1b2-c3d4e5f60718';
const TOKEN = '5e4d3c2b-1a09-4f8e-b7d6-c5b4a3928170';

const cmd: AcceptUpload = {
  tenantId: TENANT,
  userId: USER,
  tokenId: TOKEN,
  provider: 'fitbit-takeout',
  uploadId: 'export',
  objectKey: 'raw/obj',
  sha256: 'a'.repeat(64),
  bytes: 100,
  contentType: 'application/octet-stream',
  generation: 0,
  tier: 'upload',
  at: '2026-11-01T00:00:00.000Z',
};
const receiving: UploadReceiving['data'] = {
  upload_id: 'export',
  user_id: USER,
  tenant_id: TENANT,
  provider: 'fitbit-takeout',
  bytes: 100,
  created_at: '2026-11-01T00:00:00.000Z',
  expires_at: '2026-11-08T00:00:00.000Z',
  token_id: TOKEN,
  key_generation: 0,
};
const user = { status: 'active' as const, tenantId: TENANT, externalRef: null, deletionJobId: null };

describe('the acceptance of a resumable upload (issue 34 §6; contracts §13)', () => {
  it('an upload abandoned (terminated, expired or refused) is never accepted: 410, whatever raced with its last PATCH', () => {
    const abandoned = { ...uploadState.initialState(), receiving, abandoned: true };
    const refused = (() => {
      try {
        decideAcceptUpload(cmd, abandoned, user);
        return null;
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe('gone');
  });

  it('an upload still receiving is accepted', () => {
    const events = decideAcceptUpload(cmd, { ...uploadState.initialState(), receiving }, user);
    expect(events.map((e) => e.type)).toEqual(['upload.accepted']);
  });

  it('contracts §17: the zone the uploader named is kept on upload.receiving and upload.accepted, and absent when none was named', () => {
    const [created] = decideReceiveUpload(
      { tenantId: TENANT, userId: USER, tokenId: TOKEN, provider: 'fitbit-takeout', uploadId: 'export', bytes: 100, generation: 0, at: new Date('2026-11-01T00:00:00Z'), expiresAt: new Date('2026-11-08T00:00:00Z'), timeZone: 'Europe/Berlin' },
      uploadState.initialState(),
      user,
    );
    expect(created!.data).toMatchObject({ time_zone: 'Europe/Berlin' });
    const [accepted] = decideAcceptUpload({ ...cmd, timeZone: 'Europe/Berlin' }, { ...uploadState.initialState(), receiving }, user);
    expect(accepted!.data).toMatchObject({ time_zone: 'Europe/Berlin' });
    const [plain] = decideAcceptUpload(cmd, uploadState.initialState(), user);
    expect(plain!.data).not.toHaveProperty('time_zone');
  });
});

describe('an upload accepted in one append with its ledger registration (issue 37; contracts §3: the same Upload-Id replays, another body is a 422)', () => {
  const setUp = async () => {
    const store = new SqliteEventStore({ path: ':memory:' });
    const userId = randomUUID();
    await registerUser(store, { tenantId: TENANT, userId, externalRef: null, at: cmd.at });
    return { store, userId, input: { ...cmd, userId, provider: 'device-a', uploadId: 'racing' } };
  };

  it('two racing requests with the same Upload-Id and body: one is accepted, the other re-reads and answers a replay; one registration and one acceptance are stored', async () => {
    const { store, userId, input } = await setUp();
    const [a, b] = await Promise.all([acceptUpload(store, input), acceptUpload(store, input)]);
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    const winner = a.replayed ? b : a;
    expect(winner.position).toBeGreaterThan(0);
    expect((a.replayed ? a : b).accepted).toEqual(winner.accepted);
    const accepted = await store.readStream(uploadStream(userId, 'device-a', 'racing'));
    expect(accepted.map((e) => [e.type, e.globalPosition])).toEqual([['upload.accepted', winner.position]]);
    const ledger = await store.readStream(providerDataStream(userId, 'device-a'));
    expect(ledger.map((e) => [e.type, e.data.upload_stream])).toEqual([['provider_data.upload_registered', uploadStream(userId, 'device-a', 'racing')]]);
    await store.close();
  });

  it('two racing requests with the same Upload-Id and different bodies: one is accepted, the other is a 422 and writes nothing', async () => {
    const { store, userId, input } = await setUp();
    const results = await Promise.allSettled([acceptUpload(store, input), acceptUpload(store, { ...input, sha256: 'b'.repeat(64) })]);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused.map((r) => (r.reason as DomainError).code)).toEqual(['unprocessable']);
    expect(await store.readStream(uploadStream(userId, 'device-a', 'racing'))).toHaveLength(1);
    expect(await store.readStream(providerDataStream(userId, 'device-a'))).toHaveLength(1);
    await store.close();
  });

  it('contracts §3 (the 202 means accepted): sixteen of one user\'s uploads sent at once are all accepted, though each round of the race for the user\'s ledger has one winner', async () => {
    const { store, userId, input } = await setUp();
    // Sent in one turn, their appends meet in one group commit, and so do the losers' retries.
    const ids = Array.from({ length: 16 }, (_, i) => `burst-${i}`);
    const results = await Promise.allSettled(ids.map((uploadId) => acceptUpload(store, { ...input, uploadId })));
    expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    const ledger = await store.readStream(providerDataStream(userId, 'device-a'));
    expect(ledger.map((e) => e.data.upload_stream).sort()).toEqual(ids.map((id) => uploadStream(userId, 'device-a', id)).sort());
    await store.close();
  });
});
