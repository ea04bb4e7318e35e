import { z } from 'zod';
import { ConcurrencyError, StreamDeletedError, type EventStore, type RecordedEvent, type StreamAppend } from '../../src/eventstore/eventStore.js';
import { loadProviderDataHead, providerDataStream, type ProviderDataHead } from '../deletions/providerData.js';
import { decideDataWrite } from '../deletions/registerDataWrite.js';
import { DomainError } from '../shared/domainError.js';
import { contentionPause, loadState } from '../shared/commandHandler.js';
import { userState, userStream, type UserState } from '../users/user.js';
import { uploadState, uploadStream, type UploadEvent, type UploadState } from './upload.js';

export const UPLOAD_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Every acceptance of a user's payloads of one provider appends to that data's ledger, so a
 * user's uploads sent together race for it: one wins each round. A phone flushing its backlog, or
 * a tenant's server replaying many of one user's uploads, sends more at once than the five
 * attempts of other commands cover (a burst left one upload of seven losing every round: issue
 * 37's crash test). With contentionPause between attempts the losers spread out; this many bounds
 * the wait at well under a second.
 */
const ACCEPT_ATTEMPTS = 16;

export const AcceptUploadInput = z.object({
  tenantId: z.string().uuid(),
  userId: z.string().uuid(),
  /** Who stores it: the user token's id for a device upload, `sync-run:<id>` for a pull, `push:<provider>` for a push. */
  actor: z.string().min(1).max(200).optional(),
  /** A device upload's user token id (older callers); the actor when `actor` is absent. */
  tokenId: z.string().uuid().optional(),
  provider: z.string().min(1),
  uploadId: z.string().regex(UPLOAD_ID),
  objectKey: z.string().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().min(0),
  contentType: z.string(),
  /** The generation of the user's data of this provider (its ledger, commands/deletions/providerData.ts) the payload was sealed for. */
  generation: z.number().int().min(0).default(0),
  tier: z.enum(['upload', 'sync', 'backfill']).default('upload'),
  /** A pulled or pushed payload's data type (ParseContext.dataType). */
  dataType: z.string().min(1).max(100).optional(),
  /** The IANA zone the uploader named for an export whose local times carry no offset (contracts §17), canonical. */
  timeZone: z.string().min(1).max(100).optional(),
  /** A small payload, sealed, base64, kept in the acceptance (src/rawstore/inlinePayload.ts): its sealed form is at most 64 KiB and a few bytes. */
  inlinePayload: z.string().max(96 * 1024).optional(),
  at: z.string().datetime(),
}).refine((c) => c.actor !== undefined || c.tokenId !== undefined, { message: 'an actor or a token id is required' });
export type AcceptUpload = z.infer<typeof AcceptUploadInput>;

export type AcceptUploadOutcome = { replayed: boolean; accepted: NonNullable<UploadState['accepted']> };

/**
 * contracts.md §3: the same Upload-Id with the same body replays (nothing stored twice), with a
 * different body is a 422. A user whose deletion began after the token was checked is a 410.
 */
export function decideAcceptUpload(cmd: AcceptUpload, state: UploadState, user: UserState): UploadEvent[] {
  if (state.accepted) {
    if (state.accepted.sha256 !== cmd.sha256) throw new DomainError('unprocessable', 'Upload-Id was already used with a different body');
    return [];
  }
  // A resumable upload terminated, expired or refused is never accepted, whatever raced with its
  // end (issue 34 §6): the acceptance is appended against this very state, so an abandonment
  // appended first is met here (the same Upload-Id must be created again to be sent again).
  if (state.receiving && state.abandoned) throw new DomainError('gone', 'the upload was terminated or expired before it was complete');
  if (user.status === 'deleting' || user.status === 'erased') throw new DomainError('gone', 'the user is being deleted');
  if (user.status !== 'active' || user.tenantId !== cmd.tenantId) throw new DomainError('gone', 'the user no longer exists');
  return [
    {
      type: 'upload.accepted',
      data: {
        upload_id: cmd.uploadId,
        user_id: cmd.userId,
        tenant_id: cmd.tenantId,
        provider: cmd.provider,
        object_key: cmd.objectKey,
        sha256: cmd.sha256,
        bytes: cmd.bytes,
        content_type: cmd.contentType,
        tier: cmd.tier,
        accepted_at: cmd.at,
        // The actor: named token_id since device uploads were the first writers.
        token_id: (cmd.actor ?? cmd.tokenId)!,
        key_generation: cmd.generation,
        ...(cmd.dataType ? { data_type: cmd.dataType } : {}),
        ...(cmd.timeZone ? { time_zone: cmd.timeZone } : {}),
        ...(cmd.inlinePayload ? { inline_payload: cmd.inlinePayload } : {}),
      },
    },
  ];
}

/**
 * Registers the upload with the user's data of its provider (registerDataWrite.ts) and accepts it
 * in ONE append to both streams, one durable write (issue 37): the ledger at the revision its head
 * was read at (an erasure or a user deletion appended meanwhile makes the append fail, and the
 * retry reads again and refuses: 409, 410), the upload stream at the revision its state was read
 * at (a racing request with the same Upload-Id makes it fail, and the retry answers a replay, or
 * 422 for another body). `position` is the acceptance's (its ETL job's id); 0 for a replay.
 */
/** The ledger head and upload stream a caller already read (storeProviderPayload, to answer a replay before sealing). */
export type AcceptUploadReads = { head: ProviderDataHead; upload: { state: UploadState; revision: number | null } };

/**
 * The first attempt decides on `read` when the caller has it (each stream's expected revision
 * makes the append fail if either moved since, and the retry reads them again).
 *
 * `alongside` goes into every attempt's append, first (a data key issued for the payload, so
 * the key and the payload sealed with it are one durable write: DataKeys.prepare). A conflict on
 * one of its streams is not retried here: it is thrown for the caller, who made it, to settle.
 */
export async function acceptUpload(
  eventStore: EventStore,
  input: z.input<typeof AcceptUploadInput>,
  read?: AcceptUploadReads,
  attempts = ACCEPT_ATTEMPTS,
  alongside: readonly StreamAppend[] = [],
): Promise<AcceptUploadOutcome & { position: number }> {
  const cmd = AcceptUploadInput.parse(input);
  const stream = uploadStream(cmd.userId, cmd.provider, cmd.uploadId, cmd.generation);
  const ledger = providerDataStream(cmd.userId, cmd.provider);
  for (let attempt = 0; ; attempt++) {
    const known = attempt === 0 ? read : undefined;
    const head = known?.head ?? (await loadProviderDataHead(eventStore, cmd.userId, cmd.provider));
    const registration = decideDataWrite(head, { ...cmd, writeStream: stream });
    const user = (await loadState(eventStore, userStream(cmd.userId), userState)).state;
    const { state, revision } = known?.upload ?? (await loadState(eventStore, stream, uploadState));
    const events = decideAcceptUpload(cmd, state, user);
    if (events.length === 0) return { replayed: true, accepted: state.accepted!, position: 0 };
    try {
      const appended = await eventStore.appendToStreams([
        ...alongside,
        { streamName: ledger, events: [registration], expectedRevision: head.revision ?? 'no_stream' },
        { streamName: stream, events, expectedRevision: revision ?? 'no_stream' },
      ]);
      let next = state;
      for (const e of events) next = uploadState.evolve(next, e as unknown as RecordedEvent<UploadEvent>);
      return { replayed: false, accepted: next.accepted!, position: appended[appended.length - 1]!.lastPosition };
    } catch (err) {
      if ((err instanceof ConcurrencyError || err instanceof StreamDeletedError) && alongside.some((a) => a.streamName === err.streamName)) throw err;
      if (err instanceof ConcurrencyError && attempt < attempts) {
        await contentionPause(attempt);
        continue;
      }
      // The ledger tombstoned: the user is being deleted; the upload stream: erased since it was read.
      if (err instanceof StreamDeletedError) throw new DomainError('gone', err.streamName === ledger ? 'the user is being deleted' : 'this resource was erased');
      throw err;
    }
  }
}

/** Lets the route tell a replay from a new upload (of the current generation) before it stores anything; the state read is passed on to acceptUpload. */
export async function findUpload(eventStore: EventStore, userId: string, provider: string, uploadId: string, generation = 0) {
  return loadState(eventStore, uploadStream(userId, provider, uploadId, generation), uploadState);
}
