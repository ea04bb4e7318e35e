import { ConcurrencyError, StreamDeletedError, type EventStore } from '../../src/eventstore/eventStore.js';
import { deterministicId } from '../../src/shared/ids.js';
import { DomainError } from '../shared/domainError.js';
import { loadProviderDataHead, providerDataStream, type ProviderDataHead, type ProviderUploadRegistered } from './providerData.js';

export type RegisterDataWrite = {
  tenantId: string;
  userId: string;
  provider: string;
  /** The generation the writer read, and sealed its payload for. */
  generation: number;
  /** The stream that will hold the write (an upload stream; later, a pull). */
  writeStream: string;
  at: string;
};

/** Why a provider's ledger takes no new data now. */
export function refusalOf(head: ProviderDataHead, generation?: number): DomainError | null {
  if (head.closed) return new DomainError('gone', 'the user is being deleted');
  if (head.erasingJob) return new DomainError('conflict', "this provider's data is being erased; retry once the erasure job is done");
  if (generation !== undefined && head.generation !== generation) return new DomainError('conflict', "this provider's data was erased meanwhile; retry the request");
  return null;
}

/**
 * Records, before a write is accepted, that it belongs to the user's data of this provider (see
 * providerData.ts). Appended at the revision read: an erasure requested in between makes it fail
 * and the retry refuses. Registering the same write again is harmless.
 */
export async function registerDataWrite(eventStore: EventStore, cmd: RegisterDataWrite, attempts = 5): Promise<void> {
  const stream = providerDataStream(cmd.userId, cmd.provider);
  for (let attempt = 0; ; attempt++) {
    const head = await loadProviderDataHead(eventStore, cmd.userId, cmd.provider);
    const refusal = refusalOf(head, cmd.generation);
    if (refusal) throw refusal;
    const event: ProviderUploadRegistered = {
      type: 'provider_data.upload_registered',
      data: { user_id: cmd.userId, tenant_id: cmd.tenantId, provider: cmd.provider, generation: cmd.generation, upload_stream: cmd.writeStream, at: cmd.at },
    };
    try {
      await eventStore.appendToStream(stream, [{ ...event, id: deterministicId(stream, cmd.writeStream, String(cmd.generation)) }], {
        expectedRevision: head.revision ?? 'no_stream',
      });
      return;
    } catch (err) {
      if (err instanceof StreamDeletedError) throw new DomainError('gone', 'the user is being deleted');
      if (err instanceof ConcurrencyError && attempt < attempts) continue;
      throw err;
    }
  }
}
