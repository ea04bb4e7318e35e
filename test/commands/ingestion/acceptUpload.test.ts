import { describe, expect, it } from 'vitest';
import { decideAcceptUpload, type AcceptUpload } from '../../../commands/ingestion/acceptUpload.js';
import { decideReceiveUpload } from '../../../commands/ingestion/receiveUpload.js';
import { uploadState, type UploadReceiving } from '../../../commands/ingestion/upload.js';
import { DomainError } from '../../../commands/shared/domainError.js';

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
