import { ConcurrencyError, StreamDeletedError, type EventStore } from '../../src/eventstore/eventStore.js';
import { deterministicId } from '../../src/shared/ids.js';
import { loadState } from '../shared/commandHandler.js';
import { deletionState, deletionStream, isFinished, type DeletionFinished } from './deletionJob.js';
import { loadProviderData, providerDataStream, type ProviderErasureFinished } from './providerData.js';

/**
 * Ends a job that could not finish (spec "Deletion job": `failed`) with the reason. A provider
 * erasure also reopens the provider's ledger at the next generation: uploads must not stay
 * refused for ever, and whatever the job did not get to is erased by the next request, which
 * erases every generation up to its own. A user stays `deleting` (reads 404, tokens dead); a new
 * DELETE starts a new job.
 */
export async function failDeletionJob(eventStore: EventStore, jobId: string, reason: string, now = new Date()): Promise<void> {
  const stream = deletionStream(jobId);
  for (let attempt = 0; attempt < 5; attempt++) {
    const job = await loadState(eventStore, stream, deletionState);
    if (isFinished(job.state) || !job.state.request) return;
    const r = job.state.request;
    if (r.provider !== null) {
      const ledger = await loadProviderData(eventStore, r.user_id, r.provider);
      if (!ledger.closed && ledger.erasingJob === jobId) {
        const reopened: ProviderErasureFinished = {
          type: 'provider_data.erasure_finished',
          data: { user_id: r.user_id, tenant_id: r.tenant_id, provider: r.provider, generation: ledger.generation, job_id: jobId, status: 'failed', finished_at: now.toISOString() },
        };
        try {
          await eventStore.appendToStream(providerDataStream(r.user_id, r.provider), [{ ...reopened, id: deterministicId(jobId, 'ledger-failed') }], {
            expectedRevision: ledger.revision!,
          });
        } catch (err) {
          if (err instanceof ConcurrencyError) continue;
          if (!(err instanceof StreamDeletedError)) throw err;
        }
      }
    }
    const failed: DeletionFinished = {
      type: 'deletion.finished',
      data: { job_id: jobId, tenant_id: r.tenant_id, user_id: r.user_id, status: 'failed', finished_at: now.toISOString(), error: reason.slice(0, 1000) },
    };
    try {
      await eventStore.appendToStream(stream, [{ ...failed, id: deterministicId(jobId, 'failed', String(job.state.attempt)) }], { expectedRevision: job.revision! });
      return;
    } catch (err) {
      if (!(err instanceof ConcurrencyError)) throw err;
    }
  }
}
