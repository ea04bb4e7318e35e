import type { EventStore } from '../../src/eventstore/eventStore.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand } from '../shared/commandHandler.js';
import { uploadState, type UploadEvent, type UploadState } from './upload.js';

/** A parked job gets a fresh set of attempts; any other job is left alone. */
export function decideRetryEtlJob(state: UploadState, tenantId: string, by: string, now: Date): UploadEvent[] {
  if (!state.accepted || state.accepted.tenant_id !== tenantId) throw new DomainError('not_found', 'job not found');
  if (state.status !== 'parked') throw new DomainError('conflict', `job is ${state.status}, only a parked job can be retried`);
  return [{ type: 'etl.job_retried', data: { user_id: state.accepted.user_id, tenant_id: tenantId, by, at: now.toISOString() } }];
}

export async function retryEtlJob(eventStore: EventStore, stream: string, tenantId: string, by: string, now = new Date()) {
  return handleCommand(eventStore, stream, uploadState, (state) => decideRetryEtlJob(state, tenantId, by, now));
}
