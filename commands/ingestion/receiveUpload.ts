import type { EventStore } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand, loadState } from '../shared/commandHandler.js';
import { userState, userStream } from '../users/user.js';
import { uploadState, uploadStream, type AbandonReason, type UploadEvent, type UploadState } from './upload.js';

export type ReceiveUpload = {
  tenantId: string;
  userId: string;
  tokenId: string;
  provider: string;
  uploadId: string;
  bytes: number;
  generation: number;
  at: Date;
  expiresAt: Date;
  /** The IANA zone the uploader named (tus `tz`), already checked and canonical; null when none. */
  timeZone?: string | null;
};

/** What a creation request meets: a new upload, or the one of that Upload-Id (receiving or complete). */
export type Receiving = { created: boolean; state: UploadState };

/**
 * contracts §13 (tus creation): the same upload_id for the same user and provider answers the
 * existing upload; with another length it is 422. An upload abandoned (terminated, expired) may
 * be created again under its name.
 */
export function decideReceiveUpload(cmd: ReceiveUpload, state: UploadState, user: { status: string; tenantId: string | null }): UploadEvent[] {
  const existing = state.accepted ?? (state.receiving && !state.abandoned ? state.receiving : null);
  if (existing) {
    if (existing.bytes !== cmd.bytes) throw new DomainError('unprocessable', `upload_id ${cmd.uploadId} was created with Upload-Length ${existing.bytes}, not ${cmd.bytes}`);
    return [];
  }
  if (user.status !== 'active' || user.tenantId !== cmd.tenantId) throw new DomainError('gone', 'the user is being deleted or no longer exists');
  return [
    {
      type: 'upload.receiving',
      data: {
        upload_id: cmd.uploadId,
        user_id: cmd.userId,
        tenant_id: cmd.tenantId,
        provider: cmd.provider,
        bytes: cmd.bytes,
        created_at: cmd.at.toISOString(),
        expires_at: cmd.expiresAt.toISOString(),
        token_id: cmd.tokenId,
        key_generation: cmd.generation,
        ...(cmd.timeZone ? { time_zone: cmd.timeZone } : {}),
      },
    },
  ];
}

export async function receiveUpload(eventStore: EventStore, cmd: ReceiveUpload): Promise<Receiving> {
  const user = (await loadState(eventStore, userStream(cmd.userId), userState)).state;
  const result = await handleCommand(eventStore, uploadStream(cmd.userId, cmd.provider, cmd.uploadId, cmd.generation), uploadState, (state) => decideReceiveUpload(cmd, state, user));
  return { created: result.newEvents.length > 0, state: result.state };
}

/** tus termination, expiration or refusal of an upload still arriving; a complete upload is not abandoned. */
export async function abandonUpload(eventStore: EventStore, stream: string, reason: AbandonReason, at = new Date()) {
  return handleCommand(eventStore, stream, uploadState, (state): UploadEvent[] => {
    if (!state.receiving || state.abandoned) return [];
    if (state.accepted) throw new DomainError('conflict', 'the upload is complete and being processed; it can no longer be terminated');
    return [{ type: 'upload.abandoned', data: { user_id: state.receiving.user_id, tenant_id: state.receiving.tenant_id, reason, at: at.toISOString() } }];
  });
}
