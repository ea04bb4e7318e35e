import { deterministicId } from '../../src/shared/ids.js';
import { DomainError } from '../shared/domainError.js';
import { providerDataStream, type ProviderDataHead, type ProviderUploadRegistered } from './providerData.js';

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
 * The record, made before a write is accepted, that it belongs to the user's data of this
 * provider (see providerData.ts), or the refusal when the ledger takes no data now. The caller
 * appends it at the ledger's revision `head` was read at, in the same append as the write itself
 * (acceptUpload.ts): an erasure requested in between makes that append fail, and the retry reads
 * the ledger again and refuses. Its id is the write's: registering the same write again replays.
 */
export function decideDataWrite(head: ProviderDataHead, cmd: RegisterDataWrite): ProviderUploadRegistered & { id: string } {
  const refusal = refusalOf(head, cmd.generation);
  if (refusal) throw refusal;
  return {
    type: 'provider_data.upload_registered',
    data: { user_id: cmd.userId, tenant_id: cmd.tenantId, provider: cmd.provider, generation: cmd.generation, upload_stream: cmd.writeStream, at: cmd.at },
    id: deterministicId(providerDataStream(cmd.userId, cmd.provider), cmd.writeStream, String(cmd.generation)),
  };
}
